"""Questions asking where, and memories that name a place.

"Where do I live now?", "Where does my grandmother live?", 我住在哪里, どこに住んでいますか: the answer names a
place ("We finally bought a house in Lüneburg", "用户的奶奶住在斯德哥尔摩"), while the memories around it on the
same topic often do not ("Moved in last weekend, boxes everywhere"). As a "when" question prefers the memories
that say when (memoryx.search.dates.states_time), a "where" question gives `place_bonus` to the memories that name
a place: a capitalised name after in / to / at / from / near (not a month or a weekday), or, in Chinese and
Japanese, a verb of living or moving followed by where.
"""

from __future__ import annotations

import re

from memoryx.core.timeparse import MONTHS, WEEKDAYS

_ASKS = re.compile(r"\bwhere\b|哪里|哪儿|在哪|什么地方|どこ", re.I)
_NOT_PLACES = "|".join(sorted({*MONTHS, *WEEKDAYS, "christmas", "easter"}, key=len, reverse=True))
_PLACE_EN = re.compile(rf"\b(?:in|to|at|from|near)\s+(?:the\s+)?(?!(?i:{_NOT_PLACES})\b)[A-Z][\w'’-]+")
# ... "Mississauga is home now"; and after a verb of living or moving, a place typed in lower case too ("living
# in leith now", not "moving back in with Ruth")
_PLACE_HOME_EN = re.compile(r"\b[A-Z][\w'’-]+\s+is\s+(?:(?i:my|our)\s+)?(?i:home)\b"
                            r"|\b(?i:live|lives|living|moved|moving|relocated)\s+(?i:back\s+)?(?i:in|to)\s+"
                            r"(?!(?i:with|the|a|an|my|our|his|her|their|together|soon|last|next|this)\b)"
                            r"[^\W\d_][\w'’-]+")
_PLACE_CJK = re.compile(r"住在|搬到|搬去|来自|に住|へ引っ越|に引っ越|で働")


def asks_where(query: str) -> bool:
    """The question asks for a place: where, 哪里, どこ."""
    return bool(_ASKS.search(query))


def states_place(text: str) -> bool:
    """The memory names a place: "a house in Lüneburg", "at the Royal Infirmary", "住在斯德哥尔摩"."""
    return bool(_PLACE_EN.search(text) or _PLACE_HOME_EN.search(text) or _PLACE_CJK.search(text))
