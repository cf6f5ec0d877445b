"""The forgetting curve, with a decay rate per memory type.

    S (days) = base_days[type] x (1 + 2 x importance) x (1 + ln(1 + access_count))
    R        = exp(-Δt / S),  Δt = days since the memory was last used (created, accessed or restored)

base_days is 1/λ with the design's decay rates λ per type (event 0.05, opinion 0.03, fact 0.01, relation
0.005) and preferences fading slower than facts (the longest strength of all). Access
reinforces twice: it restarts Δt and raises S. With the defaults an unimportant episode (importance 0.3,
never recalled) falls below R = 0.05 after ~96 days; a fact of importance 0.5 after ~600 days; a
preference after ~750.
"""

from __future__ import annotations

import math

from memoryx.search.scoring import epoch_of

DAY_S = 86400.0
# 1/λ in days, by our memory_type values (extraction writes episodic | semantic | preference | fact) and the
# seed's names for the same kinds.
BASE_DAYS = {
    "episodic": 20.0, "event": 20.0,
    "opinion": 33.0,
    "semantic": 100.0, "fact": 100.0, "procedural": 100.0,
    "preference": 125.0,
    "relation": 200.0, "relationship": 200.0,
}
DEFAULT_BASE_DAYS = 100.0


def strength(memory: dict) -> float:
    """S in days: slower fading for durable types, important and often recalled memories."""
    base = BASE_DAYS.get(str(memory.get("memory_type") or "fact").lower(), DEFAULT_BASE_DAYS)
    importance = memory.get("importance")
    importance = 0.5 if importance is None else max(0.0, min(1.0, float(importance)))
    access = max(0, int(memory.get("access_count") or 0))
    return base * (1.0 + 2.0 * importance) * (1.0 + math.log1p(access))


def last_used(memory: dict) -> float | None:
    """Epoch seconds the memory was last created, recalled or restored."""
    times = [t for t in (epoch_of(memory.get("created_at")), epoch_of(memory.get("last_accessed_at"))) if t is not None]
    return max(times) if times else None


def retention(memory: dict, now: float) -> float:
    """R = exp(-Δt / S) at `now` (epoch seconds); 1.0 for a memory with no readable time."""
    used = last_used(memory)
    if used is None:
        return 1.0
    days = max(0.0, (now - used) / DAY_S)
    return math.exp(-days / strength(memory))


def forgettable(memory: dict) -> bool:
    """Memories the curve never archives: immutable ones and summaries (they stand for their sources)."""
    meta = memory.get("metadata") or {}
    return not meta.get("immutable") and not meta.get("abstraction")
