"""Pairs, duplicates and clusters of one scope's memories (pure functions over cosine similarities).

A pair at or above the merge threshold is the same fact by rule unless the two texts differ in substance
(other numbers, ordinals or names, or one negates what the other states): "My sister is 30" and "My sister
is 31" embed almost alike but one supersedes the other, so such pairs go to the judge model with the
0.85-0.95 band. Two events (episodic memories) that happened on different days are two happenings, never
one (`distinct_events`): they are neither merged by rule nor asked about. Merges chain to the oldest memory
of each group (the older id survives: created_at, then id).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
EVENT_TYPES = frozenset({"episodic", "event"})
_NEGATION = re.compile(r"\b(?:not|no|never|don't|doesn't|didn't|isn't|aren't|wasn't|won't|can't|cannot|anymore|"
                       r"no longer|stopped|quit)\b|不|没|別|ない", re.I)


_NAME = re.compile(r"\b[A-Z][\w'-]*")
_NOT_NAMES = {"I", "I'm", "I've", "I'd", "I'll", "User", "The", "A", "An", "My"}


def _names(text: str) -> set[str]:
    """Capitalised words (names, places, weekdays, months), the sentence's first word aside."""
    words = _NAME.findall(text.strip()[1:]) if text.strip()[:1].isupper() else _NAME.findall(text)
    return {w.lower() for w in words if w not in _NOT_NAMES}


_ORDINAL = re.compile(r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
                      r"\d+(?:st|nd|rd|th))\b|第[一二三四五六七八九十百\d]+|[一二三四五六七八九十\d]+(?:回目|番目|度目)", re.I)
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}|(?:\d{4}年)?\d{1,2}月\d{1,2}日")
_TIME_NAMES = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
               "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
               "today", "yesterday", "tomorrow", "tonight"}


def substance_differs(a: str, b: str, *, ignore_time: bool = False) -> bool:
    """True when the texts state different numbers, ordinals ("my first tournament" / "my fourth") or
    names, or only one of them is negated. `ignore_time`: dates, clock times, weekdays and months do not
    count (the same event on another day)."""
    if ignore_time:
        a, b = _DATE.sub(" ", a), _DATE.sub(" ", b)
    if sorted(_NUMBER.findall(a)) != sorted(_NUMBER.findall(b)):
        return True
    if sorted(o.lower() for o in _ORDINAL.findall(a)) != sorted(o.lower() for o in _ORDINAL.findall(b)):
        return True
    names_a, names_b = _names(a), _names(b)
    if ignore_time:
        names_a, names_b = names_a - _TIME_NAMES, names_b - _TIME_NAMES
    if names_a != names_b:
        return True
    return bool(_NEGATION.search(a)) != bool(_NEGATION.search(b))


def event_day(memory: dict) -> str | None:
    """The UTC day an event happened (valid_at, else when it was written), or None."""
    when = memory.get("valid_at") or memory.get("created_at")
    return str(when)[:10] if when else None


def distinct_events(a: dict, b: dict) -> bool:
    """Two events ({"memory_type", "valid_at", "created_at"}) on different days: two happenings."""
    return a.get("memory_type") in EVENT_TYPES and b.get("memory_type") in EVENT_TYPES and event_day(a) != event_day(b)


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def split_pairs(pairs: dict[tuple[str, str], float], texts: dict[str, str], merge_t: float,
                judge_t: float) -> tuple[list[dict], list[dict]]:
    """(rule merges, pairs for the judge) of the pairs above `judge_t`, each {"a", "b", "similarity",
    "reason"}, most similar first."""
    rule, judge = [], []
    for (a, b), sim in sorted(pairs.items(), key=lambda kv: -kv[1]):
        if sim < judge_t:
            continue
        item = {"a": a, "b": b, "similarity": round(sim, 4)}
        if sim >= merge_t and not substance_differs(texts[a], texts[b]):
            rule.append({**item, "reason": f"cosine {sim:.3f} >= {merge_t} and the same numbers and polarity"})
        elif sim >= merge_t:
            judge.append({**item, "reason": f"cosine {sim:.3f} >= {merge_t} but the texts differ in numbers or negation"})
        else:
            judge.append({**item, "reason": f"cosine {sim:.3f} in [{judge_t}, {merge_t})"})
    return rule, judge


def survivors(pairs: list[dict], order: dict[str, tuple]) -> list[dict]:
    """Merges {"survivor", "merged", "similarity", "reason", "by"} from same-fact pairs: every group of
    connected pairs collapses into its oldest member (`order[id]` sorts oldest first)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x

    why: dict[str, dict] = {}
    for p in pairs:
        ra, rb = find(p["a"]), find(p["b"])
        if ra == rb:
            continue
        keep, gone = (ra, rb) if order[ra] <= order[rb] else (rb, ra)
        parent[gone] = keep
        why[gone] = p  # members merged earlier into `gone` keep their own reason
    out = []
    for x in parent:
        root = find(x)
        if root != x:
            p = why.get(x, {})
            out.append({"survivor": root, "merged": x, "similarity": p.get("similarity"),
                        "reason": p.get("reason", "same fact"), "by": p.get("by", "rule")})
    return sorted(out, key=lambda m: (order[m["survivor"]], order[m["merged"]]))


def may_share_summary(a: dict, b: dict) -> bool:
    """Whether two similar memories ({"memory", "memory_type"}) may stand in one summary: when they state
    the same substance (names, numbers, ordinals, polarity), events whatever day they happened on (coffee on Monday, Wednesday and Friday becomes a habit). "My cousin Leo teaches in Madrid" and
    "my cousin Mia teaches in Madrid", or "I won my first tournament" and "I won my fourth", are each the
    one answer to its own question; a summary listing them would stand for, and demote in ranking, every
    one of them (the bench's one missed question of 200 was such a fact; LoCoMo's "how many tournaments has
    Nate won?" lost evidence to such a summary of events)."""
    events = a.get("memory_type") in EVENT_TYPES and b.get("memory_type") in EVENT_TYPES
    return not substance_differs(a["memory"], b["memory"], ignore_time=events)


def clusters(pairs: dict[tuple[str, str], float], threshold: float, min_size: int, members: list[str],
             compatible: Callable[[str, str], bool] | None = None) -> list[list[str]]:
    """Disjoint groups of >= `min_size` of `members` whose every pair is known, above `threshold` and
    `compatible` (greedy cliques, most connected memories first)."""
    allowed = set(members)
    adj: dict[str, set[str]] = defaultdict(set)
    for (a, b), sim in pairs.items():
        if sim > threshold and a in allowed and b in allowed and (compatible is None or compatible(a, b)):
            adj[a].add(b)
            adj[b].add(a)
    used: set[str] = set()
    out: list[list[str]] = []
    for seed in sorted(adj, key=lambda x: (-len(adj[x]), x)):
        if seed in used:
            continue
        group = [seed]
        for cand in sorted(adj[seed] - used, key=lambda x: -pairs[pair_key(seed, x)]):
            if all(cand in adj[g] for g in group):
                group.append(cand)
        if len(group) >= min_size:
            out.append(sorted(group))
            used.update(group)
    return out
