"""The days and times of day a question names, in the two other languages.

"What sport do I play on Fridays?" is answered by "毎週金曜日にサッカーをしています", "我星期天做什么？" by "I swim
every Sunday": the question and the memory name one day in different languages, and the default encoder is
English-only, so the dense path does not bridge them. A question naming a weekday, a part of the day or the
weekend also searches the keyword path with that word in English, Chinese and Japanese (`time_keywords`), as a
question naming a relation does with the relation's words (memoryx.search.relation_terms). A small closed
vocabulary, the one habits are told in.
"""

from __future__ import annotations

from memoryx.core.text import CJK_CHAR, tokenize

TIME_WORDS: tuple[tuple[str, ...], ...] = (
    ("monday", "星期一", "周一", "礼拜一", "月曜"),
    ("tuesday", "星期二", "周二", "礼拜二", "火曜"),
    ("wednesday", "星期三", "周三", "礼拜三", "水曜"),
    ("thursday", "星期四", "周四", "礼拜四", "木曜"),
    ("friday", "星期五", "周五", "礼拜五", "金曜"),
    ("saturday", "星期六", "周六", "礼拜六", "土曜"),
    ("sunday", "星期天", "星期日", "周日", "礼拜天", "日曜"),
    ("weekend", "周末", "週末"),
    ("morning", "早上", "早晨", "上午", "毎朝", "朝"),
    ("evening", "night", "晚上", "夜里", "夕方", "夜", "晩"),
)
_LATIN = [{t for w in words if not CJK_CHAR.search(w) for t in tokenize(w)} for words in TIME_WORDS]
_CJK = [tuple(w for w in words if CJK_CHAR.search(w)) for words in TIME_WORDS]


def time_keywords(query: str) -> list[str]:
    """The other words, in the three languages, of the days and times of day the question names ("on Fridays"
    -> 星期五, 周五, 礼拜五, 金曜; the question's own word is searched already); empty: it names none."""
    tokens = set(tokenize(query))
    named = [(latin, cjk) for latin, cjk in zip(_LATIN, _CJK) if tokens & latin or any(c in query for c in cjk)]
    return [w for latin, cjk in named for w in (*sorted(latin - tokens), *(c for c in cjk if c not in query))]
