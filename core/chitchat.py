"""The chit-chat pre-filter: a message made only of greetings, thanks and acknowledgements
holds no fact, so the add graph skips the extraction call for it. Rules only; English, Chinese, Japanese."""

from __future__ import annotations

import re

__all__ = ["is_chitchat", "is_empty_question", "rule_decision"]

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


# A question that tells nothing about the asker: no first-person word, nothing but the question.
_QUESTION_END = re.compile(r"(?:[?？]|(?:ですか|ますか|でしょうか|か)[。.]?|吗[。.]?|呢[。.]?)\s*$")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|our|us)\b|我|咱|私|僕|俺|わたし|うち", re.I)


def is_empty_question(text: str) -> bool:
    """A question without content about the speaker ("what's the weather like?", "今天几号？")."""
    text = (text or "").strip()
    return bool(text) and bool(_QUESTION_END.search(text)) and not _FIRST_PERSON.search(text) \
        and len(_CLAUSE_BREAK.split(text.rstrip("?？。. "))) == 1


def rule_decision(texts: list[str]) -> tuple[str, str] | None:
    """The extraction decider's rules, before any model: ("skip", why) when no turn can hold a fact, None
    when the model must decide."""
    if not texts or all(is_chitchat(t) for t in texts):
        return "skip", "greetings, thanks and acknowledgements only"
    if all(is_chitchat(t) or is_empty_question(t) for t in texts):
        return "skip", "questions without content about the speaker"
    return None
