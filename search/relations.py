"""Relations named by a question, found from its best hits.

"What's my dog's name?", "who is my manager?", "where do I live?": the memory that answers states a relation
of the user (User -has_dog-> Rex, User -lives_in-> Paris), while the memories that merely share words with the
question ("User's name is Sam") do not. The graph path walks one hop from the entities of the best keyword hits
(`TOP_HITS`, their relations read from the system of record) and keeps the relations whose name or ends say
the relation the question names (`relation_words`: "dog" in "my dog's name", "live" in "where do I live"):
their memories are graph hits, whatever words they use, and gain the `relation_bonus` knob in ranking. This
runs for questions about the user's own life (memoryx.search.speakers), bounding its cost to them.
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


def names_query(relation: dict, tokens: set[str]) -> bool:
    """The relation's name or one of its ends says one of `tokens` ("has_dog" for "my dog")."""
    text = " ".join(str(relation.get(k) or "").replace("_", " ") for k in ("relation", "source", "target"))
    return bool(tokens & set(tokenize(text)))
