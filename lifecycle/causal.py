"""Causal memory links by rule (memory <-> memory "causes" links), written by a consolidation
pass beside same_entity and sequence links; agents write any other link with link_memories.

Conservative on purpose: a link is written only where a memory's own words say so.

1. A memory states a cause with a connective (because / due to / ", so" / therefore / as a result; 因为 /
   由于 / 所以 / 因此 / 因而 / 于是; ので / から、 / ため、 / だから) and the clause on the cause side restates
   another memory of the same owner — most of that memory's content words (or CJK bigrams), at least two
   (or all of them), and the clause is mostly those words —
   which shares an entity with it or comes right before or after it in time: that memory -cause-> the
   stating one. ("I skipped work because I was exhausted" and "I was exhausted": exhausted -> skipped.)
2. A memory that opens with a consequence ("So ...", "Therefore ...", "所以……", "因此……", "だから……",
   "それで……") in a run or session: the memory just before it there -cause-> it (the connective points back
   at what was just said; outside an explicit run or session "just before" is not known, so no link).

Ambiguous words are left out: "since" (also time), bare "so" inside a sentence ("so tired"), から without a
comma ("from"), ため without a comma ("for the purpose of").
"""

from __future__ import annotations

import re

from memoryx.core.text import tokenize

CAUSE = "causes"  # memoryx.core.link_types
MIN_SHARED = 2  # content tokens a clause must share with the memory it restates (or all of a shorter one's)
MIN_COVER = 0.6  # ... and the share of that memory's content tokens
CLAUSE_COVER = 0.5  # ... and of the clause's

# (pattern, which side of the connective holds the cause)
_IN_TEXT = [
    (re.compile(r"\b(?:because(?: of)?|due to|owing to)\b", re.I), "after"),
    (re.compile(r"(?:,|;|—|-)\s*(?:and\s+)?so\b|\b(?:therefore|thus|hence|as a result|consequently|that's why|"
                r"which is why)\b", re.I), "before"),
    (re.compile(r"因为|由于"), "after"),
    (re.compile(r"所以|因此|因而|于是"), "before"),
    (re.compile(r"ので|から、|ため、|だから"), "before"),
]
_OPENS = re.compile(r"^\s*(?:so\b|therefore\b|thus\b|hence\b|as a result\b|consequently\b|that's why\b|"
                    r"所以|因此|因而|于是|だから|それで|そのため|なので)", re.I)
_MARKERS = {"because", "due", "owing", "therefore", "thus", "hence", "result", "consequently", "why", "so",
            "因", "因为", "为", "由", "由于", "于", "所", "所以", "以", "此", "因此", "而", "因而", "于是", "是",
            "ので", "から", "ため", "だか", "だから"}
_MARKERS |= {t for word in list(_MARKERS) for t in tokenize(word)}  # as the tokenizer stems them ("becaus")


def causal_clauses(text: str) -> tuple[str, str, str] | None:
    """(cause clause, effect clause, connective) of a text that states a cause inside it, else None."""
    for pattern, side in _IN_TEXT:
        m = pattern.search(text)
        if m is None:
            continue
        before, after = text[:m.start()], text[m.end():]
        if pattern.pattern.startswith("因为") and ("所以" in after):  # 因为X，所以Y
            cause, effect = after.split("所以", 1)
        else:
            cause, effect = (after, before) if side == "after" else (before, after)
        if _content(cause) and _content(effect):
            return cause, effect, m.group(0).strip(" ,;、")
    return None


def opens_with_consequence(text: str) -> str | None:
    m = _OPENS.search(text)
    return m.group(0).strip() if m else None


def _content(text: str) -> set[str]:
    """Content tokens: words, CJK bigrams (single CJK characters say little alone), no connectives."""
    out = set()
    for tok in tokenize(text):
        cjk = not tok.isascii()
        if tok in _MARKERS or (cjk and len(tok) < 2):
            continue
        out.add(tok)
    return out


def restates(memory_text: str, clause: str) -> tuple[int, int] | None:
    """(shared, of) when `clause` carries most of `memory_text`'s content tokens and is mostly made of them
    (a clause that says much more is about something else: "tired" vs "tired of waiting for the bus"),
    else None."""
    mine, theirs = _content(memory_text), _content(clause)
    shared = len(mine & theirs)
    if not mine or (shared < MIN_SHARED and shared < len(mine)) or shared / len(mine) < MIN_COVER \
            or shared / len(theirs) < CLAUSE_COVER:
        return None
    return shared, len(mine)


def causal_links(memories: list[dict], near: dict[str, set[str]], predecessor: dict[str, str]) -> list[dict]:
    """Cause links {"source_id" (the cause), "target_id", "relation": "cause", "reason"} among `memories`
    (one owner's live memories). `near[id]`: memories sharing an entity with it or next to it in time;
    `predecessor[id]`: the memory right before it in its run or session."""
    by_id = {m["id"]: m for m in memories}
    out: dict[tuple[str, str], dict] = {}
    for m in memories:
        text = m.get("memory") or ""
        found = causal_clauses(text)
        if found is not None:
            cause, _effect, word = found
            for other in sorted(near.get(m["id"], ())):
                if other == m["id"] or other not in by_id:
                    continue
                hit = restates(by_id[other]["memory"] or "", cause)
                if hit is not None:
                    out.setdefault((other, m["id"]), {
                        "source_id": other, "target_id": m["id"], "relation": CAUSE,
                        "reason": f"{text!r} says {word!r} and its cause clause restates this memory "
                                  f"({hit[0]} of {hit[1]} content words)"})
        word = opens_with_consequence(text)
        prev = predecessor.get(m["id"])
        if word and prev in by_id and (prev, m["id"]) not in out:
            out[(prev, m["id"])] = {"source_id": prev, "target_id": m["id"], "relation": CAUSE,
                                    "reason": f"{text!r} opens with {word!r} right after this memory in its run/session"}
    return list(out.values())


__all__ = ["CAUSE", "causal_clauses", "causal_links", "opens_with_consequence", "restates"]
