"""The final score of a search hit: relevance mixed with importance, recency and access frequency.

    score = (w_rel x relevance + w_imp x importance + w_rec x recency + w_acc x access) / sum(w)

with the weights of the settings (MEMORYX_WEIGHT_*), recency = 0.5 ** (age_days / half_life) from the
search's reference time (`now`, else the clock) and access = log(1 + accesses) / log(1 + 50), capped at 1,
where accesses are those of days before today (memoryx.search.access: repeating a search does not move its own
scores). Used by rank and again by rerank.
"""

from __future__ import annotations

import math
import time
from typing import Any

from memoryx.core.filters import to_epoch
from memoryx.search.access import settled_accesses, today
from memoryx.settings import Settings


def epoch_of(value: Any) -> float | None:
    """Epoch seconds of a stored time, None when absent or unreadable."""
    if value is None:
        return None
    try:
        return to_epoch(value)
    except Exception:  # a malformed time only loses its recency
        return None


def event_time(mem: dict) -> float | None:
    """When the remembered event happened: valid_at (a replayed message's time, a dated fact), else created_at."""
    ts = epoch_of(mem.get("valid_at"))
    return ts if ts is not None else epoch_of(mem.get("created_at"))


def recency(mem: dict, half_life_days: float, now: float) -> float:
    return decay(event_time(mem), half_life_days, now)


def decay(ts: float | None, half_life_days: float, now: float) -> float:
    """0.5 ** (age in days / half-life) of an event at epoch `ts` (0 without a time)."""
    if ts is None or half_life_days <= 0:
        return 0.0
    age_days = max(0.0, (now - ts) / 86400.0)
    return 0.5 ** (age_days / half_life_days)


def access_score(mem: dict, day: str | None = None) -> float:
    n = settled_accesses(mem, day or today())
    return min(1.0, math.log1p(n) / math.log1p(50))


def final_scores(cands: list[dict], settings: Settings, now: float | None = None) -> None:
    """Set c["score"] = weighted mix of relevance, importance, recency decay and access frequency (0..1)."""
    now = time.time() if now is None else now
    w_rel = float(settings.weight_relevance)
    w_imp = float(settings.weight_importance)
    w_rec = float(settings.weight_recency)
    w_acc = float(settings.weight_access)
    total = w_rel + w_imp + w_rec + w_acc
    if total <= 0:
        w_rel, total = 1.0, 1.0
    half = float(settings.recency_half_life_days)
    day = today()  # the clock's day, whatever `now` is: accesses happen in real time
    for c in cands:
        mem = c["memory"]
        imp = mem.get("importance")
        imp = 0.5 if imp is None else max(0.0, min(1.0, float(imp)))
        c["score"] = (w_rel * c["relevance"] + w_imp * imp + w_rec * recency(mem, half, now)
                      + w_acc * access_score(mem, day)) / total
        if mem.get("status") == "summarized":  # a summary stands for it: the summary ranks first
            c["score"] *= float(settings.summarized_demotion)


def ordered(cands: list[dict], threshold: float | None) -> list[dict]:
    """Best score first, below-threshold hits dropped."""
    out = sorted(cands, key=lambda c: -c["score"])
    return out if threshold is None else [c for c in out if c["score"] >= threshold]
