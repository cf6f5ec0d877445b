"""Graph states of MemoryX. TypedDicts from typing_extensions (LangServe + pydantic on Python 3.11 need it).

Each node returns a partial update of these keys. Input keys are what a caller passes; the rest are
filled by nodes. `result` is the final, mem0-compatible output of each graph.
"""

from __future__ import annotations

import operator
from typing import Any

from typing_extensions import Annotated, NotRequired, TypedDict


class Fact(TypedDict):
    text: str
    category: str  # preference | fact | plan | experience | opinion
    importance: float  # 0..1
    memory_type: str  # episodic | semantic | preference | fact
    owner: NotRequired[str]  # "user" or "agent": whose memory it is (agent memories kept apart)


class Operation(TypedDict):
    event: str  # ADD | UPDATE | DELETE | NONE
    text: str
    reason: str
    id: NotRequired[str | None]  # real memory id (UPDATE/DELETE/NONE), never the model's small integer
    old_memory: NotRequired[str | None]
    fact_index: NotRequired[int | None]


class AddInput(TypedDict):
    messages: Any  # str | list[{"role", "content", "timestamp"?, "name"?}]
    user_id: NotRequired[str | None]
    agent_id: NotRequired[str | None]
    run_id: NotRequired[str | None]
    metadata: NotRequired[dict | None]
    infer: NotRequired[bool]
    trace_id: NotRequired[str | None]


class AddOutput(TypedDict):
    result: dict


class AddState(AddInput, total=False):
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


class SearchInput(TypedDict):
    query: str
    user_id: NotRequired[str | None]
    agent_id: NotRequired[str | None]
    run_id: NotRequired[str | None]
    limit: NotRequired[int]
    filters: NotRequired[dict | None]
    threshold: NotRequired[float | None]
    mode: NotRequired[str | None]  # fast | deep | auto
    expand_depth: NotRequired[int | None]
    relation_types: NotRequired[list[str] | None]
    include_invalid: NotRequired[bool]


class SearchOutput(TypedDict):
    result: dict


class SearchState(SearchInput, total=False):
    plan: dict  # {"mode", "expand_depth", "tokens", "entities": [...], "query_vector"?}
    dense_hits: list[dict]  # [{"id", "score"}] best first
    keyword_hits: list[dict]
    graph_hits: list[dict]
    graph_relations: list[dict]
    fused: list[dict]
    result: dict
