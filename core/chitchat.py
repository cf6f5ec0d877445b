"""The chit-chat pre-filter: a message made only of greetings, thanks and acknowledgements
holds no fact, so the add graph skips the extraction call for it. Rules only; English, Chinese, Japanese."""

from __future__ import annotations

import re

__all__ = ["is_chitchat"]

_CLAUSE_BREAK = re.compile(r"[.!?;。！？；\n,，、]+")
_QUOTES_AND_SPACE = " \t\"'“”‘’"

_CHITCHAT_EN = re.compile(
    r"^(?:hi|hello|hey|yo|thanks|thank you|thx|ok|okay|k|sure|yes|no|yep|nope|cool|great|nice|lol|haha|bye|"
    r"good (?:morning|night|evening|afternoon)|how are you|what's up|see you|you're welcome|got it|sounds good|"
    r"alright|fine|awesome|wow|hmm|right)(?:\s+(?:there|again|so much|a lot|man|buddy|everyone|all))?[\s!.?,~]*$",
    re.I,
)
_CHITCHAT_ZH = re.compile(r"^(?:你好|您好|嗨|哈喽|谢谢|谢啦|多谢|好的|好|嗯|嗯嗯|哦|哈哈+|再见|拜拜|晚安|早上好|早安|没问题|收到|是的|对|不客气|行)[!！。.~～？?，,]*$")
_CHITCHAT_JA = re.compile(r"^(?:こんにちは|こんばんは|おはよう(?:ございます)?|ありがとう(?:ございます)?|はい|いいえ|うん|さようなら|またね|了解|どうも)[!！。.~～？?]*$")


def is_chitchat(text: str) -> bool:
    """True for pure greetings/acknowledgements/thanks (rule pre-filter)."""
    clauses = [c.strip(_QUOTES_AND_SPACE) for c in _CLAUSE_BREAK.split(text or "") if c.strip(_QUOTES_AND_SPACE)]
    if not clauses:
        return True
    for c in clauses:
        if not (_CHITCHAT_EN.match(c) or _CHITCHAT_ZH.match(c) or _CHITCHAT_JA.match(c)):
            return False
    return True
