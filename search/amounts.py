"""Questions asking for an amount, and memories that state one.

"How much did I spend on the coffee mugs?", "How many hours have I played in total?", "What is the difference in
price between ...?", "How old is Mango?", 花了多少钱, いくらかかった: the answer is a number the user said
somewhere ("I paid $12 each", "it took me 70 hours", "she's 6"), and the turns around it on the same topic say
none. As a "when" question prefers the memories that say when (memoryx.search.dates.states_time), an amount
question gives `amount_bonus` to the memories that state an amount: a figure, a price, a percentage, or a number
word before a unit.
"""

from __future__ import annotations

import re

_UNITS = (r"hours?|minutes?|days?|weeks?|months?|years?|pages?|miles?|kilometers?|km|pounds?|lbs?|kilos?|kg|"
          r"dollars?|euros?|points?|stars?|followers?|times?|cups?|books?|episodes?|videos?|steps?|percent")
_ASKS = re.compile(
    rf"\bhow much\b|\bhow many (?:{_UNITS})\b|\bhow old\b|\bwhat age\b"
    r"|\b(?:in )?total\b|\bdifference\b|\bpercentage\b|\baltogether\b"
    r"|\b(?:spend|spent|cost|costs|price|paid|pay|save|saved|earn|earned|raise|raised)\b"
    r"|多少钱|花了多少|一共|总共|总计|差多少|几个小时|多少小时|几岁|多大|いくら|合計|全部で|何時間|何ページ|何歳", re.I)
_NUMBER_WORDS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
                 r"fifty|hundred|thousand|a dozen|half")
_STATES = re.compile(
    rf"[$€£¥]\s?\d|\d\s?(?:%|\$)|\b\d+(?:[.,]\d+)*\b|\b(?:{_NUMBER_WORDS})\s+(?:{_UNITS})\b"
    r"|[0-9一二三四五六七八九十百千万两]+\s*(?:元|块|美元|小时|分钟|天|页|次|円|時間|分|日|ページ|回|ドル)", re.I)


def asks_amount(query: str) -> bool:
    """The question asks for a number: how much, how many of a unit, a total, a difference, a price."""
    return bool(_ASKS.search(query))


# a date the extraction wrote beside a fact ("promoted today (2024-06-26)") is when, not how much
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")


def states_amount(text: str) -> bool:
    """The memory states a figure ("$12", "70 hours", "20%", "two weeks", "三个小时", "500円"; an age: "she's 6")."""
    return bool(_STATES.search(_ISO_DATE.sub(" ", text)))


# an age asked ("how old am I", "what age is my son", 几岁, 何歳) and one given: "I'm 67", "she's 8 months old",
# "turned 5", "34岁", "6歳" (not "three years ago", nor "67 minutes")
