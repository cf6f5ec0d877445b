"""The closed set of memory ↔ memory link types, and the words (English, Chinese, Japanese) that name them.

    causes       the source led to the target ("I was exhausted" -> "I skipped the gym")
    follows      the target came after the source (one after the other in a run or session)
    part_of      the source is a part or a detail of the target
    contradicts  the two cannot both hold
    supports     the source backs, explains or is the basis of the target
    same_topic   both are about the same person, thing or subject

Agents' tools may name a link in their own words ("led to", "因为", "based on"); `link_type` maps the word to
its type and refuses a word it does not know, naming the set, so the stored relation is always a type.
"""

from __future__ import annotations

from memoryx.errors import InvalidInputError

LINK_TYPES = ("causes", "follows", "part_of", "contradicts", "supports", "same_topic")

_WORDS = {
    "causes": ("cause", "caused", "because", "so", "led to", "leads to", "results in", "therefore", "因为", "所以",
               "导致", "造成", "因此", "原因", "なので", "だから", "原因", "のため"),
    "follows": ("follow", "followed by", "then", "after", "next", "sequence", "before", "然后", "接着", "之后", "随后",
                "次に", "その後", "続いて"),
    "part_of": ("part of", "partof", "belongs to", "detail of", "member of", "属于", "一部分", "部分", "の一部"),
    "contradicts": ("contradict", "contradiction", "conflicts with", "conflict", "but", "however", "矛盾", "相反",
                    "冲突", "但是", "反対"),
    "supports": ("support", "based on", "refers to", "reference", "explains", "evidence", "confirms", "基于", "引用",
                 "支持", "证明", "根拠", "裏付け", "参照"),
    "same_topic": ("related", "relates to", "same topic", "same entity", "same_entity", "about", "similar", "相关",
                   "有关", "同一主题", "関連", "同じ話題"),
}
_BY_WORD = {w: t for t, words in _WORDS.items() for w in words} | {t: t for t in LINK_TYPES}
_BY_WORD |= {t.replace("_", " "): t for t in LINK_TYPES}


def link_type(relation: str) -> str:
    """The link type a relation word names; InvalidInputError naming the set for a word it does not know."""
    word = " ".join(str(relation or "").strip().lower().replace("-", " ").split())
    found = _BY_WORD.get(word) or _BY_WORD.get(word.replace(" ", "_"))
    if found is None:
        raise InvalidInputError(f"unknown link type {relation!r}: use one of {', '.join(LINK_TYPES)} "
                                "(or a word for one: because, then, part of, contradicts, based on, related)")
    return found
