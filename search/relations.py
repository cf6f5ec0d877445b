"""Relations named by a question, found from its best hits.

"What's my dog's name?", "who is my manager?", "where do I live?": the memory that answers states a relation
of the user (User -has_dog-> Rex, User -lives_in-> Paris), while the memories that merely share words with the
question ("User's name is Sam") do not. The graph path walks one hop from the entities of the best keyword hits
(`TOP_HITS`, their relations read from the system of record) and keeps the relations whose name or ends say
the relation the question names (`relation_words`: "dog" in "my dog's name", "live" in "where do I live"):
their memories are graph hits, whatever words they use, and gain the `relation_bonus` knob in ranking. This
runs for questions about the user's own life (memoryx.search.speakers), bounding its cost to them. Without a
graph (or when extraction made no relation of it), a memory whose text states the user's relation
(`states_relation`: "User's dog is called Biscuit", "用户的狗叫旺财") gains the same bonus.
"""

from __future__ import annotations

import re

from memoryx.core.text import tokenize

TOP_HITS = 3

# the relation a question names: the noun after "my" / "our" ("my dog's name", "who is my manager"), or the verb
# after "I" ("where do I live", "where did I work")
_POSSESSED = re.compile(r"\b(?:my|our)\s+(\w+)", re.I)
_DONE_BY_ME = re.compile(r"\b(?:do|did|does|can|could|will|would|should|have|had)\s+(?:i|we)\s+(\w+)", re.I)


def relation_words(query: str) -> set[str]:
    """The keyword tokens of the relation the question names (empty: it names none)."""
    words = [m.group(1) for rx in (_POSSESSED, _DONE_BY_ME) for m in rx.finditer(query)]
    return set(tokenize(" ".join(words)))


# the user's relation as a memory states it: "User's dog ...", "my wife Priya ...", "our cat ..."; Chinese
# 用户的狗 / 我的狗, Japanese ユーザーの犬 / 私の犬
_STATED_EN = re.compile(r"\b(?:user's|my|our)\s+(?:new\s+|old\s+|little\s+|older\s+|younger\s+)?(\w+)", re.I)
_STATED_CJK = re.compile(r"(?:用户的|我的|我们的|ユーザーの|私の)([\u3040-\u30ff\u4e00-\u9fff]{1,2})")
_ASKED_CJK = re.compile(r"(?:我的|我们的|私の)([\u3040-\u30ff\u4e00-\u9fff]{1,2})")


def cjk_relation(query: str) -> str | None:
    """The first character of the relation a Chinese or Japanese question names ("我的狗叫什么" -> "狗")."""
    m = _ASKED_CJK.search(query)
    return m.group(1)[0] if m else None


def states_relation(text: str, tokens: set[str], cjk: str | None = None) -> bool:
    """The memory's text states the user's relation the question names: "User's dog is called Biscuit" for
    "my dog" (tokens {"dog"}), "用户的狗叫旺财" for "我的狗" (cjk "狗"). Unlike the words the question shares
    with every memory ("name"), the possessive says whose and what."""
    if tokens and any(set(tokenize(m.group(1))) & tokens for m in _STATED_EN.finditer(text)):
        return True
    return bool(cjk) and any(m.group(1).startswith(cjk) for m in _STATED_CJK.finditer(text))


def names_query(relation: dict, tokens: set[str]) -> bool:
    """The relation's name or one of its ends says one of `tokens` ("has_dog" for "my dog")."""
    text = " ".join(str(relation.get(k) or "").replace("_", " ") for k in ("relation", "source", "target"))
    return bool(tokens & set(tokenize(text)))
