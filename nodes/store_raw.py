"""store_raw: the infer=False path. Each user/assistant/tool message is stored as it is, one memory per
message, with the caller's metadata plus the message's role (and name/timestamp); no model is called.
The message's timestamp is the memory's valid_at (when it was said); in a group chat each message goes to
its speaking participant (memoryx.ingest.speakers) with metadata.speaker.

Exact duplicates of live memories in the scope are skipped (same rule as the inferred path); ids are
deterministic (uuid5(trace_id/raw index)) so a replay after a crash adds nothing twice.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import deterministic_id, elapsed_ms, scope_of
from memoryx.core.text import memory_hash
from memoryx.ingest.speakers import event_time, participant_scope, speaker_meta
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def store_raw(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    sql = services.sql
    scope = scope_of(state)
    trace_id = state["trace_id"]
    base_meta = dict(state.get("metadata") or {})
    messages = [m for m in state.get("normalized_messages") or [] if m["role"] != "system"]
    vectors = services.embeddings.embed_documents([m["content"] for m in messages]) if messages else []
    results: list[dict] = []
    written: dict[str, list[float]] = {}
    with sql.scope_lock(scope):
        seen: set[str] = set()
        for i, (m, vec) in enumerate(zip(messages, vectors)):
            memory_id = deterministic_id(trace_id, f"raw{i}")
            text_hash = memory_hash(m["content"])
            where = participant_scope(scope, m)
            dup = sql.find_by_hash(where, text_hash)
            if text_hash in seen or (dup is not None and dup["id"] != memory_id):
                continue
            seen.add(text_hash)
            meta = {**base_meta, "role": m["role"]}
            for key in ("name", "timestamp"):
                if m.get(key):
                    meta[key] = m[key]
            meta.update(speaker_meta(m))
            sql.insert_memory(scope=where, text=m["content"], category=None, importance=0.5, memory_type="episodic",
                              metadata=meta, trace_id=trace_id, memory_id=memory_id, valid_at=event_time(m))
            results.append({"id": memory_id, "memory": m["content"], "event": "ADD"})
            written[memory_id] = list(vec)
        if written:
            ids = list(written)
            services.projector.sync_memories(ids, vectors=[written[k] for k in ids])
    return {"executed": results, "timings": {"store_raw": elapsed_ms(start)}}
