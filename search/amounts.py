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
_ASKS_AGE = re.compile(r"\bhow old\b|\bwhat age\b|几岁|多大了?|多少岁|何歳|いくつ", re.I)
_AGE_WORDS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
              r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety")
_GIVES_AGE = re.compile(
    r"\b\d{1,3}\s*(?:years?|months?|weeks?)[\s-]+old\b|\b(?:i'm|i am|user is|he's|she's|he is|she is|it's|is|turned|"
    r"turns|turning|aged?)\s+(?:now\s+|only\s+|just\s+)?(?:\d{1,3}\b(?!\s*(?:[:.,/]\d|%|(?:" + _UNITS + r")\b))"
    r"|(?:" + _AGE_WORDS + r")\b(?=\s*(?:[,.;!?)]|$|and\b|now\b|today\b|this\b|last\b|next\b|in\b|on\b)))"
    r"|[0-9一二三四五六七八九十两]+\s*(?:岁|歳|才)", re.I)


def asks_age(query: str) -> bool:
    """The question asks how old someone is."""
    return bool(_ASKS_AGE.search(query))


_ASKS_OWN_AGE = re.compile(r"\bhow old (?:am i|will i be)\b|\bwhat age am i\b|\bmy age\b"
                           r"|我(?:今年)?(?:几岁|多大|多少岁)|我的年龄|私(?:は|って|の)?(?:今)?(?:何歳|いくつ)|私の年齢", re.I)


def asks_own_age(query: str) -> bool:
    """The question asks the user's own age ("how old am I", 我几岁, 私は何歳): someone else's is no answer."""
    return bool(_ASKS_OWN_AGE.search(query))


def without_own_age_idiom(query: str) -> str:
    """The keyword query of "how old am I?" without "old": the user says their age as "I'm 67", and "old" would
    match "our old cottage" or the dog "getting old"."""
    return re.sub(r"\bhow\s+old\b", "how", query, flags=re.I) if asks_own_age(query) else query


# the user giving their own: "I'm 67 and retired", "User is 34", "I turned 40 today", "I'm Jonas, 34, ...",
# "我今年34岁", "私は30歳です"
_GIVES_OWN_AGE = re.compile(
    r"(?:\b(?:i'm|i am|user is|i turned|user turned|i'll be|i will be)|^(?:just\s+)?turned|(?:^|[,.!]\s*)turning)"
    r"\s+(?:now\s+|only\s+|just\s+)?"
    r"(?:\d{1,3}|" + _AGE_WORDS + r")\b(?!\s*(?:[:.,/]\d|%|(?:" + _UNITS + r")\b(?!\s+old)))"
    r"|\b(?:i'm|i am|user is)\s+[A-Z][\w'’-]+,\s*\d{1,3}\b|^(?:user|i)\b[^.]{0,20}\baged?\s+\d{1,3}\b"
    r"|(?:我|用户)(?:今年|现在)?[0-9一二三四五六七八九十两]+\s*岁|(?:私|ユーザー)は(?:今)?[0-9一二三四五六七八九十]+\s*歳"
    # an introduction ("我叫刘洋，今年36岁"), a Japanese statement opening on the age, its speaker unsaid ("29歳で、...")
    r"|(?:我叫|我是)[^，,。！？]{1,12}[，,]\s*(?:今年)?[0-9一二三四五六七八九十两]+\s*岁"
    r"|(?:^|[。！!？?]\s*)[0-9一二三四五六七八九十]+\s*歳|^今年[0-9一二三四五六七八九十两]+\s*岁", re.I)


def gives_own_age(text: str) -> bool:
    """The user says how old they are ("I'm 67 and retired", "我今年34岁"); "Rocco turned ten" is the dog's."""
    return bool(_GIVES_OWN_AGE.search(_ISO_DATE.sub(" ", text)))


def gives_age(text: str) -> bool:
    """The memory says how old someone is ("I'm 67 and retired", "He's 8 months old", "我女儿6岁")."""
    return bool(_GIVES_AGE.search(_ISO_DATE.sub(" ", text)))
