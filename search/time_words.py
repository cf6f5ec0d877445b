"""The days and times of day a question names, in the two other languages.

"What sport do I play on Fridays?" is answered by "毎週金曜日にサッカーをしています", "我星期天做什么？" by "I swim
every Sunday": the question and the memory name one day in different languages, and the default encoder is
English-only, so the dense path does not bridge them. A question naming a weekday, a part of the day or the
weekend also searches the keyword path with that word in English, Chinese and Japanese (`time_keywords`), as a
question naming a relation does with the relation's words (memoryx.search.relation_terms). A small closed
vocabulary, the one habits are told in.
"""

from __future__ import annotations

from memoryx.core import lexicon
from memoryx.core.text import CJK_CHAR, tokenize

# each weekday, part of the day and the weekend, with its words in the three languages (lexicon table
# search.time_word)
TIME_WORDS: tuple[tuple[str, ...], ...] = tuple(lexicon.groups("search.time_word").values())
_LATIN = [{t for w in words if not CJK_CHAR.search(w) for t in tokenize(w)} for words in TIME_WORDS]
_CJK = [tuple(w for w in words if CJK_CHAR.search(w)) for words in TIME_WORDS]


def time_keywords(query: str) -> list[str]:
    """The other words, in the three languages, of the days and times of day the question names ("on Fridays"
    -> 星期五, 周五, 礼拜五, 金曜; the question's own word is searched already); empty: it names none."""
    tokens = set(tokenize(query))
    named = [(latin, cjk) for latin, cjk in zip(_LATIN, _CJK) if tokens & latin or any(c in query for c in cjk)]
    return [w for latin, cjk in named for w in (*sorted(latin - tokens), *(c for c in cjk if c not in query))]
