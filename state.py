"""The add graph's state (the search graph's lives in search/state.py). TypedDicts from typing_extensions (LangServe + pydantic on Python 3.11 need it).

Each node returns a partial update of these keys. Input keys are what a caller passes; the rest are
filled by nodes. `result` is the final, mem0-compatible output of each graph.
"""

from __future__ import annotations

import operator
from typing import Any

from typing_extensions import Annotated, NotRequired, TypedDict

from memoryx.core.scope import Scope


class Fact(TypedDict):
    text: str
    category: str  # preference | fact | plan | experience | opinion
    importance: float  # 0..1
    memory_type: str  # episodic | semantic | preference | fact
    owner: NotRequired[str]  # "user" or "agent": whose memory it is (agent memories kept apart)
    categories: NotRequired[list[str]]  # custom categories, stored as metadata.categories
    speaker: NotRequired[str]  # group chats: who stated it (a message's name or user_id)
    source_index: NotRequired[int]  # the message it came from (dated from that message's timestamp)
    certainty: NotRequired[float]  # how definite the statement is, as the extraction model judged it (0..1)
    importance_factors: NotRequired[dict]  # scarcity, impact, recency, certainty (memoryx.knowledge.importance)
    confidence: NotRequired[float]  # certainty x source reliability (conflict resolution)


class Operation(TypedDict):
    event: str  # ADD | UPDATE | DELETE | NONE
    text: str
    reason: str
    id: NotRequired[str | None]  # real memory id (UPDATE/DELETE/NONE), never the model's small integer
    old_memory: NotRequired[str | None]
    fact_index: NotRequired[int | None]


class AddInput(TypedDict):
    messages: Any  # str | list[{"role", "content", "timestamp"?, "name"?, "user_id"?}]
    user_id: NotRequired[str | None]
    group_id: NotRequired[str | None]  # a group chat: facts go to the speaking participant
    agent_id: NotRequired[str | None]
    run_id: NotRequired[str | None]
    metadata: NotRequired[dict | None]
    infer: NotRequired[bool]
    trace_id: NotRequired[str | None]
    agent_memory: NotRequired[str | None]  # "tenant" (default: the user's tenancy) or "global" (agent only)
    instructions: NotRequired[dict | None]  # per-call prompt/update_prompt/includes/excludes/categories (add_options)


class AddOutput(TypedDict):
    result: dict


def _add_counts(left: dict | None, right: dict | None) -> dict:
    """Reducer: per-key sums (model calls of a step that ran twice add up)."""
    out = dict(left or {})
    for key, value in (right or {}).items():
        out[key] = out.get(key, 0) + value
    return out


class AddState(AddInput, total=False):
    scope: Scope  # the caller's scope, derived once from the ids by validate_input
    normalized_messages: list[dict]  # validated [{"role", "content", "timestamp"?}]
    facts: list[Fact]
    agent_facts: list[Fact]
    candidates: list[dict]  # [{"ref": "0", "id": real id, "memory": text}] deduplicated
    llm_response: str
    operations: list[Operation]
    executed: list[dict]  # [{"id", "memory", "event", "previous_memory"?}]
    entities: list[dict]  # extracted [{"name", "entity_type"}]
    relations: list[dict]  # extracted [{"source", "relation", "destination"}]
    linked_entities: dict  # normalised name -> entity row
    graph_changes: dict  # {"added_entities": [...], "deleted_entities": [...]}
    timings: Annotated[dict, operator.or_]
    error: str | None
    result: dict
    # --- fact pipeline internals (add graph) ---
    extraction_response: str  # raw answer(s) of the extraction model
    fact_vectors: list[list[float]]  # embeddings of facts + agent_facts, same order (reused for the projection)
    judgment: dict  # {"model_name", "latency_ms", "notes": [...]} of the judge step
    review_notes: list[str]  # what the human review changed or refused
    change_marker: int | None  # memory-history position when retrieve_similar searched (see execute_ops)
    stale_retries: int  # times execute_ops sent the run back to retrieval (a concurrent add changed the scope)
    stale: bool
    model_calls: Annotated[dict, _add_counts]  # {"extract_facts": n, "judge": n, ...}
    extraction_decision: dict  # {"decision": remember | skip, "by": rule | model, "reason"} (extract_facts)
    excluded_facts: list[dict]  # facts the exclude rule dropped, with topic and keyword (instructions.py)
    episodes: list[dict]  # episode memories this run wrote (nodes/episodes.py)
