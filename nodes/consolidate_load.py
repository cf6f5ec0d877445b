"""consolidate_load: the scope's live memories (those of its owner: memoryx.core.owners) and, for each
one no pass has seen yet (staged), its nearest neighbours above the judge threshold (the vector store's own
cosine scores: only staged memories are looked up, so a pass costs what arrived since the last one). The
staged memories' vectors are read back from the vector store, not embedded again (embedding was 84 of the
112 s of a 10,000-memory pass); only one whose projection is still queued (outbox) is embedded."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from memoryx.core.filters import to_epoch
from memoryx.core.owners import owned_by
from memoryx.core.runs import elapsed_ms
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.lifecycle.similarity import pair_key
from memoryx.lifecycle.state import ConsolidateState, compact, vector_cache, visible_filter
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

EMBED_BATCH = 256


def scope_of(state: ConsolidateState) -> Scope:
    return Scope(user_id=state.get("user_id") or None, agent_id=state.get("agent_id") or None,
                 run_id=state.get("run_id") or None, group_id=state.get("group_id") or None)


def now_of(value) -> float:
    if value is None:
        return time.time()
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return to_epoch(value, what="now")  # within years 1-9999: a now of 1e20 would archive everything
    raise InvalidInputError(f"now must be epoch seconds or an ISO time, got {value!r}")


def consolidate_load(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    scope = scope_of(state)  # ScopeError when no id is given
    services = services_of(runtime)
    s = services.settings
    trace_id = state.get("trace_id") or str(uuid.uuid4())
    rows = [compact(r) for r in services.sql.list_memories(scope, limit=None) if owned_by(scope, r)]
    live = {r["id"]: r for r in rows if r["status"] not in ("merged", "archived")}
    staged = [r for r in live.values() if r["status"] == "staged"]
    pairs: dict[tuple[str, str], float] = {}
    vectors: dict[str, list[float]] = {}
    flt = visible_filter()
    k = s.consolidate_neighbours + 1  # the memory itself comes back first
    for i in range(0, len(staged), EMBED_BATCH):
        batch = staged[i:i + EMBED_BATCH]
        queued = services.sql.unprojected_memories([r["id"] for r in batch])  # their stored vector may be stale
        stored = services.vectors.memory_vectors([r["id"] for r in batch if r["id"] not in queued])
        missing = [r for r in batch if r["id"] not in stored]
        if missing:
            stored.update(zip([r["id"] for r in missing], services.embeddings.embed_documents([r["memory"] for r in missing])))
        found = services.vectors.search_memories_batch([stored[r["id"]] for r in batch], scope, limit=k,
                                                       threshold=s.consolidate_judge_threshold, filters=flt)
        for row, hits in zip(batch, found):
            vectors[row["id"]] = stored[row["id"]]
            for hit in hits:
                if hit.id != row["id"] and hit.id in live:
                    key = pair_key(row["id"], hit.id)
                    pairs[key] = max(pairs.get(key, 0.0), float(hit.score))
    vector_cache.put(trace_id, vectors)
    return {"trace_id": trace_id, "now_ts": now_of(state.get("now")), "memories": rows,
            "pairs": [[a, b, round(sim, 5)] for (a, b), sim in sorted(pairs.items())],
            "model_calls": 0, "timings": {"load": elapsed_ms(start)}}
