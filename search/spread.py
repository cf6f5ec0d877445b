"""Aggregation questions spread their hits across sessions.

"How many times did I ...", "in total", "all the ...", "how many days between X and Y", "which did I do first,
X or Y": the answer is assembled from several conversations, and a top k filled from one session (its turns
lend each other context, memoryx.search.tuning) leaves the others out. For such a question each further hit
from a session already represented scores x `session_spread` (a tuning knob) per hit before it, and the list
is re-sorted: the
strongest hit of every session keeps its score, the rest of a crowded session yields its place.

A session is read from the memory's event time (valid_at, else created_at): hits on the same UTC day belong to
the same session - a signal every store has, not a field of one benchmark.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from memoryx.core import lexicon
from memoryx.search.scoring import event_time

_AGGREGATE = lexicon.pattern("search.aggregate", flags=re.I)  # "how many", "in total", "which ... or", 一共, 何回


def asks_aggregate(query: str) -> bool:
    """The answer is gathered or compared across several events."""
    return bool(_AGGREGATE.search(query))


def session_of(mem: dict) -> str | None:
    ts = event_time(mem)
    return None if ts is None else datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")


def spread(ranked: list[dict], decay: float = 0.85, session=lambda c: session_of(c["memory"])) -> list[dict]:
    """`ranked` (best first, each with "score" and "memory") with repeated sessions decayed and re-sorted
    (`session`: a hit's session, None for none; bench/recall/fit_spread.py reads it off a trace)."""
    if decay >= 1.0:
        return ranked
    seen: dict[str, int] = {}
    out = []
    for c in ranked:
        key = session(c)
        n = seen.get(key, 0) if key is not None else 0
        if key is not None:
            seen[key] = n + 1
        out.append(dict(c, score=c["score"] * decay ** n) if n else c)
    return sorted(out, key=lambda c: -c["score"])
