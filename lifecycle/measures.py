"""The memory store as the design's metrics see it, computed from the live rows' columns (never their text):

- store size per layer (working / short_term / long_term, lifecycle/layers.py; "archived" for archived ones)
  and memory_type;
- compression ratio: the memories written per memory kept, (kept − summaries + merged + summarized) / kept —
  1.0 when consolidation has folded nothing, 3.0 when three memories were written per one kept;
- retention rate: the mean retention R = exp(−Δt/S) of the kept memories (lifecycle/forgetting.py), 1.0 fresh.
"""

from __future__ import annotations

import time

from memoryx.lifecycle.forgetting import retention
from memoryx.lifecycle.layers import layer_of
from memoryx.stores.sql.values import iso

_KEPT = ("active", "staged")
# memory_type is free text on the write path: a metric label takes only the types MemoryX writes itself
_TYPES = {"fact", "preference", "semantic", "episodic", "procedural", "procedural_memory", "event", "opinion",
          "relation", "relationship", "summary"}
_FOLDED = ("merged", "summarized")


def store_measures(rows: list[dict], now: float | None = None) -> dict:
    """{"size": {(layer, memory_type): n}, "compression_ratio": x, "retention_rate": r} of memory rows
    (stores/sql/measures.py `memory_measure_rows`)."""
    now = time.time() if now is None else now
    size: dict[tuple[str, str], int] = {}
    kept = folded = summaries = 0
    retention_sum = 0.0
    for row in rows:
        status = row.get("status") or "active"
        memory = {**row, "created_at": iso(row.get("created_at")), "last_accessed_at": iso(row.get("last_accessed_at")),
                  "metadata": row.get("metadata") or {}}
        if status in _FOLDED:
            folded += 1
            continue
        layer = "archived" if status == "archived" else layer_of(memory)
        memory_type = str(row.get("memory_type") or "fact")
        key = (layer, memory_type if memory_type in _TYPES else "other")
        size[key] = size.get(key, 0) + 1
        if status in _KEPT:
            kept += 1
            summaries += 1 if memory["metadata"].get("abstraction") else 0
            retention_sum += retention(memory, now)
    return {"size": size,
            "compression_ratio": (kept - summaries + folded) / kept if kept else 1.0,
            "retention_rate": retention_sum / kept if kept else 1.0}
