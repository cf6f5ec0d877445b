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

from memoryx.core import lexicon
from memoryx.core.caseless import Caseless

# the units, number words and question words of each language: lexicon tables search.unit, search.number_word,
# search.asks_amount and search.states_amount
_ASKS = lexicon.pattern("search.asks_amount", flags=re.I)
_STATES = Caseless(lexicon.pattern("search.states_amount", flags=re.I))  # read on every candidate's text


def asks_amount(query: str) -> bool:
    """The question asks for a number: how much, how many of a unit, a total, a difference, a price."""
    return bool(_ASKS.search(query))


# a date the extraction wrote beside a fact ("promoted today (2024-06-26)") is when, not how much
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")


def states_amount(text: str) -> bool:
    """The memory states a figure ("$12", "70 hours", "20%", "two weeks", "三个小时", "500円"; an age: "she's 6")."""
    return bool(_STATES.search(_ISO_DATE.sub(" ", text)))

