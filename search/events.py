"""Questions about two events: "how many days between X and Y", "which came first, X or Y", "how many days
before X did I Y", "how long did I X before I Y", "how long since X when I Y", "the total of A and B"; in Chinese and Japanese
"X和Y之间", "X和Y，哪个先", "XとYの間", "XとY、どちらが先".

The answer needs both events' memories among the candidates, while one search over the whole question favours
whichever event shares more words with it. `event_phrases` splits such a question into its two event phrases
(also "the total / difference of A and B"); the keyword path (nodes/keyword_recall.py) searches each phrase too
and merges the lists with `merged_hits`, so the best match of each event is as strong a keyword hit as the best
match of the whole question, and marks each phrase's best keyword hit (`with_covers`). Fused with the dense
path and lent context by their neighbours, the first event's conversation can still fill the top five, so the
ranking (nodes/rank.py) moves each event's best-ranked marked hit up to just after the overall best
(`covering_first`; SearchTuning.event_cover). Only keyword hits are marked: an event phrase is a few specific
words ("the 'Coastal Cleanup' event"), and on LongMemEval dev the keyword top hit of a phrase was its evidence
turn 22 times in 34, the dense top hit 9 times.
"""

from __future__ import annotations

import re

from memoryx.core import lexicon

__all__ = ["covering_first", "event_phrases", "merged_hits", "with_covers"]

# the two-event shapes of each language, tried in order (lexicon table search.event_pair): "how many days (had)
# passed between the Walk for Hunger and the Coastal Cleanup?", "which event happened first, the purchase of the
# coffee maker or the malfunction of the stand mixer?", "how many days before the 'Rack Fest' did I participate in
# the 'Turbocharged Tuesdays' event?", "how many weeks had passed since I recovered from the flu when I went on my
# 10th jog outdoors?", "how long did I use my new binoculars before I saw the American goldfinches?", "what is the
# total number of comments on my Facebook Live session and my most popular YouTube video?",
# 「我参加慈善义走和海滩清洁活动之间隔了多少天？」「买咖啡机和搅拌机坏掉，哪个先发生？」
# 「ウォークとビーチ清掃の間は何日でしたか？」「コーヒーメーカーの購入とミキサーの故障、どちらが先でしたか？」
_PATTERNS = lexicon.patterns("search.event_pair", flags=re.I)
MIN_WORDS = 2  # a phrase of one word ("it", 它) is no event
COVER_AFTER = 1  # each event's best hit is moved up to just after the overall best


def _long_enough(phrase: str) -> bool:
    """Two words, or two CJK characters (Chinese and Japanese are written without spaces)."""
    return len(phrase.split()) >= MIN_WORDS or sum(1 for ch in phrase if "\u2e80" <= ch <= "\u9fff") >= MIN_WORDS


def event_phrases(query: str) -> tuple[str, ...]:
    """The two event phrases of a two-event question, or () for any other question."""
    for rx in _PATTERNS:
        m = rx.search(query or "")
        if m:
            phrases = tuple(p.strip(" ,'\"") for p in m.groups())
            if all(_long_enough(p) for p in phrases):
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


def with_covers(merged: list[dict], per_event: list[list[dict]], role: str | None = None) -> list[dict]:
    """`merged` with each event's best hit marked: "covers" lists the events (0, 1) whose own search it tops.
    With `role` (the question asks about one side of a chat: "did I ..."), the best hit of that side: the
    assistant's reply naming the event is not the user's account of it."""
    best = {}
    for i, hits in enumerate(per_event):
        top = next((h for h in hits if role is None or _said(h) in (None, role)), None)
        if top is not None:
            best.setdefault(top["id"], set()).add(i)
    return [dict(h, covers=sorted(best[h["id"]] | set(h.get("covers") or ()))) if h["id"] in best else h
            for h in merged]


def _said(hit: dict) -> str | None:
    """The chat side of a keyword hit (its payload's metadata.role), None when it has none."""
    return ((hit.get("payload") or {}).get("metadata") or {}).get("role")


def covering_first(ranked: list[dict], after: int = COVER_AFTER) -> list[dict]:
    """`ranked` (best first, each with "score") with, for each event, its best-ranked covering hit moved up to
    just after the first `after` hits when it ranks lower: the answer needs both events, and one search over the
    whole question can bury one of them under the other event's conversation. A moved hit takes the score of
    the hit it now precedes (so scores still read best first) and names "event" among its sources."""
    chosen: list[dict] = []
    for event in (0, 1):
        for pos, c in enumerate(ranked):
            if event in (c.get("covers") or ()):
                if pos >= after and all(c is not x for x in chosen):
                    chosen.append(c)
                break
    if not chosen:
        return ranked
    rest = [c for c in ranked if all(c is not x for x in chosen)]
    floor = rest[after]["score"] if len(rest) > after else None
    moved = [dict(c, score=max(c["score"], floor) if floor is not None else c["score"],
                  sources=[*c.get("sources", ()), "event"]) for c in chosen]
    return rest[:after] + moved + rest[after:]
