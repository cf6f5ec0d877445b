"""State of the consolidate graph (memoryx.graphs.consolidate). TypedDicts from typing_extensions (LangServe
and pydantic on Python 3.11 need them).

The state holds the scope's memories as compact dicts and the similar pairs (no vectors: the checkpoint of a
10,000-memory pass stays a few MB); each step writes its own decisions, each with its reason and inputs.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict

from typing_extensions import Annotated, NotRequired, TypedDict

from memoryx.core.filters import Cond, FilterNode, Not

MEMORY_FIELDS = ("id", "memory", "memory_type", "importance", "importance_factors", "confidence", "access_count",
                 "created_at", "last_accessed_at", "updated_at", "status", "metadata", "run_id", "valid_at")


class ConsolidateInput(TypedDict):
    user_id: NotRequired[str | None]
    agent_id: NotRequired[str | None]
    run_id: NotRequired[str | None]
    group_id: NotRequired[str | None]  # a group chat's scope
    now: NotRequired[float | str | None]  # epoch seconds or ISO time the forgetting curve is read at
    dry_run: NotRequired[bool]  # decide and report, write nothing
    trace_id: NotRequired[str]


class ConsolidateOutput(TypedDict):
    report: dict


class ConsolidateState(ConsolidateInput, total=False):
    now_ts: float
    memories: list[dict]  # MEMORY_FIELDS of every live memory of the scope
    pairs: list[list]  # [a, b, cosine] of neighbours above the judge threshold
    merges: list[dict]  # {"survivor", "merged", "similarity", "by": rule|model, "reason", "texts"}
    contradictions: list[dict]  # {"winner", "loser", "subject", "relation", "values", "texts", "reason"}
    summaries: list[dict]  # {"text", "sources", "level", "memory_type", "importance", "reason"}
    archives: list[dict]  # {"id", "text", "retention", "strength_days", "idle_days", "reason"}
    entity_merges: list[dict]  # {"survivor", "merged", "similarity", "reason", "names"}
    entity_decisions: list[dict]  # every entity pair above the lower threshold, merged or kept, and why
    links: list[dict]  # {"source_id", "target_id", "relation": same_topic | follows | causes, "reason"}
    cause_check: dict  # {"by": model | rule (...), "rejected": [cause links the model refused]}
    promotions: list[dict]  # {"id", "layer", "reason"}: layer changes
    ended_runs: list[dict]  # {"run_id", "kept", "archived"}: runs closed as idle (memoryx.lifecycle.sessions)
    model_calls: Annotated[int, operator.add]
    model_raw: Annotated[dict, operator.or_]  # step -> the model's raw answer
    model_problems: Annotated[list, operator.add]  # a step whose model answer was unusable, and why
    timings: Annotated[dict, operator.or_]
    report: dict


def compact(row: dict) -> dict:
    return {k: row.get(k) for k in MEMORY_FIELDS}


def visible_filter(include_archived: bool = False, include_staged: bool = True) -> FilterNode | None:
    """The search filter on memory status: merged and archived memories stay out unless include_archived;
    staged ones too when the settings say so. A point without a status (projected by an older version) passes."""
    hidden = () if include_archived else ("merged", "archived")
    hidden += () if include_staged else ("staged",)
    return Not((Cond("status", "in", hidden),)) if hidden else None


class VectorCache:
    """Embeddings computed by a pass's load step, reused when its apply step re-projects the same memories
    (the checkpointed state holds no vectors). Per process, a few recent passes; a resumed pass re-embeds."""

    def __init__(self, passes: int = 4):
        self._data: OrderedDict[str, dict[str, list[float]]] = OrderedDict()
        self._passes = passes
        self._lock = threading.Lock()

    def put(self, trace_id: str, vectors: dict[str, list[float]]) -> None:
        with self._lock:
            self._data[trace_id] = vectors
            while len(self._data) > self._passes:
                self._data.popitem(last=False)

    def pop(self, trace_id: str) -> dict[str, list[float]]:
        with self._lock:
            return self._data.pop(trace_id, {})


vector_cache = VectorCache()
