"""Request bodies of the REST routes (pydantic): limits and messages a client sees on a 422."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Message(BaseModel):
    role: Literal["user", "assistant", "system", "tool"] = Field(description="Who said it.")
    content: str = Field(min_length=1, description="The message text.")
    name: str | None = Field(None, description="Speaker name, e.g. in a group conversation.")
    timestamp: str | None = Field(None, description="When it was said (ISO-8601).")
    user_id: str | None = Field(None, min_length=1, max_length=256,
                                description="The speaker's participant id in a group chat (else the name is used).")


class ScopeFields(_Body):
    user_id: str | None = Field(None, min_length=1, max_length=256)
    agent_id: str | None = Field(None, min_length=1, max_length=256)
    run_id: str | None = Field(None, min_length=1, max_length=256)
    group_id: str | None = Field(None, min_length=1, max_length=256,
                                 description="A group chat: its participants' memories (needs a key bound to the group).")


class AddRequest(ScopeFields):
    messages: str | list[Message] = Field(description="A string or a list of {role, content} messages.")
    metadata: dict[str, Any] | None = None
    infer: bool = Field(True, description="Extract facts with the model (True) or store the messages verbatim (False).")
    agent_memory: Literal["tenant", "global"] | None = Field(None, description="Where the assistant's own memories go: 'tenant' (default: this user's tenancy) or 'global' (the agent alone, shared by all its users; needs a key bound to the agent).")
    participants: dict[str, str] | None = Field(
        None, max_length=200, description="A group chat (with group_id): {speaker name: user id}. Each speaker's own "
        "facts go to that user within the group, found by searching with that user_id. The key must hold every user named.")

    @field_validator("messages")
    @classmethod
    def _not_empty(cls, v):
        if isinstance(v, str) and not v.strip() or isinstance(v, list) and not v:
            raise ValueError("messages must not be empty")
        return v


class SearchRequest(ScopeFields):
    query: str = Field(min_length=1, max_length=8000)
    limit: int = Field(10, ge=1, le=1000)
    filters: dict[str, Any] | None = None
    threshold: float | None = Field(None, ge=-1.0, le=1.0, description="Minimum score of a result.")
    mode: Literal["fast", "deep", "auto", "hybrid", "vector", "keyword"] | None = Field(
        None, description="Retrieval recipe: keyword (BM25), vector (dense), hybrid (both), fast, deep, auto.")
    start: str | float | None = Field(None, description="Only memories whose event happened at or after this time "
                                      "(ISO-8601 or epoch seconds; the event time is valid_at, else created_at).")
    end: str | float | None = Field(None, description="... and before this time (exclusive).")
    speaker: str | None = Field(None, min_length=1, max_length=256,
                                description="In a group chat: only what this participant said (metadata.speaker).")
    query_time_filter: Literal["auto", "strict", "off"] | None = Field(
        None, description="What a period the query names does: auto (in-period first, topped up), strict (in-period "
                          "only), off (ranking only). Default MEMORYX_QUERY_TIME_FILTER.")
    memory_types: list[str] | None = Field(None, max_length=20, description="Only memories of these types "
                                           "(fact, preference, semantic, episodic, procedural_memory, ...).")
    now: str | float | None = Field(None, description="Answer as of this time (ISO-8601 or epoch seconds): relative "
                                    "periods, 'currently' and recency are read from it. Default: the clock.")
    as_of: str | float | None = Field(None, description="Like now, and events after it are left out.")


class ContextRequest(ScopeFields):
    query: str = Field(min_length=1, max_length=8000)
    max_tokens: int = Field(1000, ge=16, le=100000)
    limit: int = Field(20, ge=1, le=200)


class UpdateRequest(_Body):
    text: str = Field(min_length=1, description="The new text of the memory.")
    metadata: dict[str, Any] | None = None


class VerifyRequest(_Body):
    result: Literal["CORRECT", "INCORRECT", "PARTIAL"]
    notes: str | None = Field(None, max_length=4000)


class ResumeRequest(_Body):
    operations: list[dict[str, Any]] | None = Field(None, description="Approved (possibly edited) operations; null approves the pending ones, [] rejects them.")


class BatchVerifyRequest(_Body):
    trace_ids: list[str] = Field(min_length=1, max_length=1000, description="The runs to verify, each on its own.")
    result: Literal["CORRECT", "INCORRECT", "PARTIAL"]
    notes: str | None = Field(None, max_length=4000)


class AuditRequest(_Body):
    user_id: str | None = Field(None, min_length=1, max_length=256)
    agent_id: str | None = Field(None, min_length=1, max_length=256)
    run_id: str | None = Field(None, min_length=1, max_length=256)
    since: str | None = Field(None, max_length=64, description="An ISO time or a span back from now (24h, 7d).")
    kinds: list[str] | None = Field(None, description="add_then_delete, churn, parsed_vs_executed, slow, failed, unverified.")


class SettleFindingRequest(_Body):
    dismiss: bool = Field(False, description="Dismiss the finding.")
    reason: str | None = Field(None, max_length=4000)
    verification_trace_id: str | None = Field(None, min_length=1, max_length=64,
                                              description="A verified run that settles the finding.")
