"""Digests: the episodic memories of one period summarised into one memory (seed: "多条情景记忆提取为语义记忆",
more than 20 episodes -> one summary).

A consolidation pass groups an owner's live episodic memories that no summary stands for yet by the period of
their event time (settings.digest_period: a UTC day, ISO week or calendar month); a period with more than
settings.digest_min_memories of them gets one summary memory (memory_type semantic, metadata abstraction
"summary" and `sources`), written by the chat model in one batched call for all periods of the pass. With the
offline model the summary is extractive and deterministic (`extractive`): the period's span, then the
memories that cover most of its words, oldest first. The sources stay, demoted in ranking (status
summarized, `summary_id` pointing to the digest); the pass's rollback removes the digest and restores them.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timezone

from memoryx.lifecycle.similarity import EVENT_TYPES

MAX_SOURCES = 200  # per digest: one prompt stays readable; the rest of a crowded period waits for the next pass
EXTRACT_SENTENCES = 5
_WORD = re.compile(r"[^\W\d_]{3,}|[\u3040-\u30ff\u4e00-\u9fff]{2}", re.U)
_STOP = {"the", "and", "was", "were", "with", "for", "that", "this", "had", "has", "have", "user", "went", "got",
         "about", "from", "they", "them", "their", "then", "there", "what", "when", "our", "out", "his", "her"}


def event_time(memory: dict) -> datetime | None:
    value = memory.get("valid_at") or memory.get("created_at")
    if not value:
        return None
    when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)


def period_of(when: datetime, period: str) -> str:
    """"2025-03-04" (day), "2025-W10" (ISO week), "2025-03" (month)."""
    if period == "day":
        return when.date().isoformat()
    if period == "month":
        return when.strftime("%Y-%m")
    year, week, _ = when.isocalendar()
    return f"{year}-W{week:02d}"


def digestible(memory: dict, skip: set[str]) -> bool:
    meta = memory.get("metadata") or {}
    return (memory.get("memory_type") in EVENT_TYPES and memory.get("status") in ("active", "staged")
            and memory["id"] not in skip and not meta.get("abstraction") and not meta.get("summary_id"))


def periods(memories: list[dict], *, period: str, more_than: int,
            skip: set[str] = frozenset()) -> list[tuple[str, list[str]]]:
    """[(period key, source ids oldest first)] of the periods holding more than `more_than` digestible memories."""
    if more_than <= 0:
        return []
    by_period: dict[str, list[tuple[datetime, str]]] = {}
    for m in memories:
        when = event_time(m) if digestible(m, skip) else None
        if when is not None:
            by_period.setdefault(period_of(when, period), []).append((when, m["id"]))
    out = []
    for key in sorted(by_period):
        items = sorted(by_period[key])
        if len(items) > more_than:
            out.append((key, [i for _, i in items[:MAX_SOURCES]]))
    return out


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def extractive(key: str, texts: list[str]) -> str:
    """A deterministic summary: the period and how many events, then up to EXTRACT_SENTENCES of the memories,
    chosen greedily for the words of the period they cover (each word counted once), told oldest first."""
    counts = Counter(w for t in texts for w in _words(t))
    covered: set[str] = set()
    chosen: list[int] = []
    for _ in range(min(EXTRACT_SENTENCES, len(texts))):
        gains = [(sum(counts[w] for w in _words(t) - covered), -i) for i, t in enumerate(texts) if i not in chosen]
        gain, neg = max(gains)
        if gain <= 0:
            break
        chosen.append(-neg)
        covered |= _words(texts[-neg])
    picked = "; ".join(texts[i].rstrip(".。!！ ") for i in sorted(chosen))
    return f"{key}: {len(texts)} events, among them: {picked}."


__all__ = ["MAX_SOURCES", "event_time", "extractive", "period_of", "periods"]
