"""Present-tense questions prefer the latest fact.

"Where do I live now?", "What's my current job?", "Who is my manager?", "我现在住在哪里?": when several memories
answer about equally well, the latest one is the answer and the older ones are what it superseded. Among the
candidates whose relevance is within `CLOSE` of the best one, each gets `current_bonus` (a tuning knob) x its
place in time (0 for the oldest, 1 for the newest event). Past-tense and "when" questions are left alone: there
the older memory may be the one asked about. Superseded memories (invalid_at set by an update) are below every
valid one whatever their score (`superseded_last`).
"""

from __future__ import annotations

import re

from memoryx.search.scoring import epoch_of, event_time

CLOSE = 0.35  # relevance within this of the best candidate's competes on time

_CURRENT = re.compile(
    r"\b(now|currently|current|these days|at the moment|at present|presently|still|latest|most recent|anymore)\b"
    r"|\b(do|does|am|is|are) (i|my|we|our)\b|\b(what|who|where)(?:'s| is| are) my\b"
    r"|现在|目前|当前|如今|还在|最近的|今は|現在|今の|最新", re.I)
_PAST = re.compile(r"\b(did|was|were|used to|previously|before|originally|first|ago|last (year|month|week))\b"
                   r"|以前|之前|过去|当初|昔|前に", re.I)


def asks_current(query: str) -> bool:
    """A question about how things stand (present tense or "now"), not about the past."""
    return bool(_CURRENT.search(query)) and not _PAST.search(query)


def prefer_latest(cands: list[dict], bonus: float) -> None:
    """Add bonus x place-in-time to the relevance of the candidates close to the best one (in place)."""
    if bonus <= 0 or not cands:
        return
    best = max(c["relevance"] for c in cands)
    close = [(c, event_time(c["memory"])) for c in cands if c["relevance"] >= best - CLOSE]
    times = [ts for _, ts in close if ts is not None]
    if len(times) < 2 or max(times) - min(times) <= 0:
        return
    lo, span = min(times), max(times) - min(times)
    for c, ts in close:
        if ts is not None:
            c["relevance"] += bonus * (ts - lo) / span


def superseded_last(ranked: list[dict], now: float | None) -> list[dict]:
    """Memories no longer valid (invalid_at in the past of `now`) after every valid one, order kept otherwise."""
    def stale(c: dict) -> bool:
        ended = epoch_of(c["memory"].get("invalid_at"))
        return ended is not None and (now is None or ended <= now)

    return [c for c in ranked if not stale(c)] + [c for c in ranked if stale(c)]
