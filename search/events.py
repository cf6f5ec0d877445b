"""Questions about two events: "how many days between X and Y", "which came first, X or Y", "how many days
before X did I Y", "how long did I X before I Y", "how long since X when I Y".

The answer needs both events' memories among the candidates, while one search over the whole question favours
whichever event shares more words with it. `event_phrases` splits such a question into its two event phrases;
the keyword path (nodes/keyword_recall.py) searches each phrase too and merges the lists with `merged_hits`, so
the best match of each event is as strong a keyword hit as the best match of the whole question.
"""

from __future__ import annotations

import re

__all__ = ["event_phrases", "merged_hits"]

_END = r"\s*[?？.]*\s*$"
_PATTERNS = (
    # "how many days (had) passed between the Walk for Hunger and the Coastal Cleanup?"
    re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)" + _END, re.I),
    # "which event happened first, the purchase of the coffee maker or the malfunction of the stand mixer?"
    re.compile(r"\bfirst\b,?\s+(.+?)\s+or\s+(.+?)" + _END, re.I),
    # "how many days before the 'Rack Fest' did I participate in the 'Turbocharged Tuesdays' event?"
    re.compile(r"\b(?:before|after)\s+(.+?)\s+(?:did|had|was|were)\s+(?:i|we)\s+(.+?)" + _END, re.I),
    # "how many weeks had passed since I recovered from the flu when I went on my 10th jog outdoors?"
    re.compile(r"\bsince\s+(?:i\s+|we\s+)?(.+?)\s+when\s+(?:i|we)\s+(.+?)" + _END, re.I),
    # "how long did I use my new binoculars before I saw the American goldfinches?"
    re.compile(r"\b(?:did|had)\s+(?:i|we)\s+(.+?)\s+(?:before|after|when)\s+(?:i|we)\s+(.+?)" + _END, re.I),
)
MIN_WORDS = 2  # a phrase of one word ("it") is no event


def event_phrases(query: str) -> tuple[str, ...]:
    """The two event phrases of a two-event question, or () for any other question."""
    for rx in _PATTERNS:
        m = rx.search(query or "")
        if m:
            phrases = tuple(p.strip(" ,'\"") for p in m.groups())
            if all(len(p.split()) >= MIN_WORDS for p in phrases):
                return phrases
    return ()


def merged_hits(lists: list[list[dict]]) -> list[dict]:
    """Hit lists ({"id", "score", ...}, best first) merged into one: each list's scores scaled to its best
    (1.0), a memory keeping its highest scaled score, best first."""
    best: dict[str, dict] = {}
    for hits in lists:
        top = max((h["score"] for h in hits), default=0.0)
        if top <= 0:
            continue
        for h in hits:
            score = h["score"] / top
            if h["id"] not in best or score > best[h["id"]]["score"]:
                best[h["id"]] = {**h, "score": score}
    return sorted(best.values(), key=lambda h: -h["score"])
