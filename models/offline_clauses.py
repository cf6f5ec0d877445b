"""The offline model's reading of a clause no rule reads as a statement (memoryx.models.offline): the clause kept
as a fact nearly as said, in the canonical person ("been training for a 10k" -> "I've been training for a 10k",
"mum's birthday is ..." -> "User's mum's birthday is ...", "我..." -> "用户...", "私は..." -> "ユーザーは..."), a
dated event beside a statement, and the people named beside one. The shapes of a sentence it reads are in
memoryx.models.offline_shapes."""

from __future__ import annotations

import re

from memoryx.core import lexicon
from memoryx.core.chitchat import is_chitchat
from memoryx.core.timeparse import leading_time, mentions_time
from memoryx.models import offline_rules as rules
from memoryx.models.offline_shapes import (
    DOING_NO_SUBJECT_EN, FAMILY_FIRST_EN, FAVOURITE_LABEL_EN, FILLER_EN, FIRST_PERSON_EN,
    FIRST_PERSON_LATER_EN, JA_FAMILY_TOPIC, JA_FAVOURITE, JA_NAMED_TOPIC, JA_OWN_DOING, JA_OWN_HAVING, NAMED_NEWS_EN,
    NAMED_PERSON_EN, NEWS_NO_SUBJECT_EN, ORIGIN_EN, PARTICULAR_CJK, REMARK_CJK, REQUEST_THEN_WHEN_EN, SCHEDULED_EN,
    THING_FIRST_EN,
    USER_AS_OBJECT_EN, VERBISH, VERB_FIRST_EN, ZH_FAMILY_TOPIC, ZH_NAMED_TOPIC, rewritten_en, says_when,
)


def going_on(fact: dict, separator: str, more: str) -> dict:
    """The fact with what the next sentence adds to it."""
    return dict(fact, text=f"{fact['text']}{separator}{more}")


def dated_event(clause: str, statements: list) -> dict | None:
    """The event beside a canonical fact when the clause says when it happened ("Last week, I started a new
    job at Acme" -> "User started a new job at Acme last week", dated by extract_facts): the canonical fact
    ("User works at Acme") stays the one the judge matches and updates, the event keeps the date."""
    if not statements or not mentions_time(clause) or not any(st.polarity for st in statements):
        return None
    text = generic_fact(clause)
    if not text or text in {rules.fact_text(st) for st in statements}:
        return None
    return {"text": text, "category": "experience", "importance": 0.5, "memory_type": "episodic", "owner": "user"}


# someone named beside the statement: "I live in Bristol with my boyfriend Tom", "I went hiking and my sister Ana
# came too". The statement's own fact ("User lives in Bristol ...") is replaced when it changes (a move); who the
# boyfriend is must outlive it, so it is a fact of its own
_COMPANION_EN = re.compile(r".\b(?:with|and)\s+(?:my|our)\s+(\w+)\s+([A-Z][\w'’-]+)")


_NOT_A_RELATION = lexicon.words("offline.not_a_relation", "en")  # "with my new ..." names no relation


def companions(clause: str) -> list[dict]:
    """"User's boyfriend is Tom" (and "User's dog is Rufus") from a clause naming "... with my boyfriend Tom and
    our dog Rufus" after its statement."""
    return [{"text": f"User's {m.group(1)} is {m.group(2)}", "category": "fact", "importance": 0.8,
             "memory_type": "semantic", "owner": "user"}
            for m in _COMPANION_EN.finditer(clause) if m.group(1).lower() not in _NOT_A_RELATION]


def _dated_order(clause: str, lang: str) -> str:
    """A clause that opens with a relative date, in the order the generic rules read: "Yesterday I went to
    Paris" -> "I went to Paris yesterday", "昨天我去了北京" -> "我昨天去了北京", "先週京都に行った" ->
    "私は先週京都に行った" (extract_facts then adds the absolute date from the message time)."""
    lead = leading_time(clause)
    if lead is None:
        return clause
    expr, rest = lead
    if lang == "en":
        return f"{rest} {expr[0].lower() + expr[1:]}" if FIRST_PERSON_EN.match(rest) else clause
    if lang == "zh":
        return f"我{expr}{rest[1:]}" if rest.startswith("我") and not rest.startswith("我们") else clause
    body = rest[2:] if rest.startswith("私は") else rest
    return f"私は{expr}{body}"


def generic_fact(clause: str) -> str | None:
    if is_chitchat(clause):
        return None
    lang = rules.detect_language(clause)
    if lang != "en" and REMARK_CJK.search(clause) and len(clause) < 14 and not PARTICULAR_CJK.search(clause):
        return None  # "今日は暑いね": small talk about the day, not the speaker's (nor a dated event of theirs)
    clause = _dated_order(clause, lang)
    if lang == "en":
        clause = FILLER_EN.sub("", clause) or clause  # "hey I'm zoe, ..." is "I'm zoe, ..."
        label = FAVOURITE_LABEL_EN.match(clause)
        if label:
            return f"User's {label.group(1).lower()} is {label.group(2).strip()}"
        if NEWS_NO_SUBJECT_EN.match(clause) and len(clause.split()) >= 3:
            clause = ("I've " if clause.lower().startswith("been ") else "I ") + clause[0].lower() + clause[1:]
        elif DOING_NO_SUBJECT_EN.match(clause) and len(clause.split()) >= 3:
            clause = "I'm " + clause[0].lower() + clause[1:]
        elif NAMED_PERSON_EN.match(clause) and len(clause.split()) >= 4:
            return clause
        elif NAMED_PERSON_EN.match(clause) and NAMED_NEWS_EN.match(clause):
            return clause  # "Marcus proposed", "Karen left": what someone in the user's life just did
        if ORIGIN_EN.match(clause):
            return ORIGIN_EN.sub(lambda m: "User comes" if m.group(1) else "User is", clause, count=1)
        first_person, words = bool(FIRST_PERSON_EN.match(clause)), len(clause.split())
        if not first_person and words >= 4 and FIRST_PERSON_LATER_EN.search(clause):
            return clause
        if not first_person and words >= 4 and THING_FIRST_EN.match(clause) \
                and (re.search(r"\b(?:my|our)\b", clause, re.I) or says_when(clause)):
            return clause
        if not first_person and words >= 4 and SCHEDULED_EN.match(clause) and says_when(clause):
            return clause
        if not first_person and words >= 4 and FAMILY_FIRST_EN.match(clause):
            return "User's " + clause  # "mum's birthday is 2nd of june" -> "User's mum's birthday is ..."
        if not first_person and words >= 5 and USER_AS_OBJECT_EN.match(clause) and VERBISH.search(clause):
            return clause
        if not first_person and REQUEST_THEN_WHEN_EN.match(clause) and says_when(clause):
            return clause
        if not first_person and words >= 3 and not VERBISH.search(clause):
            return clause  # "Vegetarian since 2019, no fish either": verbless, as chats describe the speaker
        if words >= 3 and VERB_FIRST_EN.match(clause):
            return clause
        if not first_person or words < 4:
            return None
        rewritten = rewritten_en(clause)
        if rewritten:
            return rewritten
        if mentions_time(clause):  # a dated event ("I went to Paris yesterday"): about the user
            return re.sub(r"^i\b", "User", clause, count=1, flags=re.I)
        return clause
    if lang == "zh":
        if ZH_FAMILY_TOPIC.match(clause) and len(clause) >= 5:
            return "用户的" + clause  # "双胞胎女儿在学钢琴" -> "用户的双胞胎女儿在学钢琴"
        if ZH_NAMED_TOPIC.match(clause) and len(clause) >= 6:
            return clause  # "王磊最近在学弹吉他": someone in the user's life, named, as NAMED_PERSON_EN keeps
        if not clause.startswith("我") or len(clause) < 4:
            return None
        return "用户" + clause[1:] if not clause.startswith("我们") else clause
    if clause.startswith("私は") and len(clause) >= 5:
        return "ユーザーは" + clause[2:]
    if clause.startswith("私の") and len(clause) >= 5:  # "私の誕生日は七月十日です"
        return "ユーザーの" + clause[2:]
    if JA_FAMILY_TOPIC.match(clause) and len(clause) >= 5:
        return "ユーザーの" + clause  # "妹は来年結婚します" -> "ユーザーの妹は来年結婚します"
    if JA_FAVOURITE.match(clause) and len(clause) >= 6:
        return "ユーザーの" + clause  # "一番好きな花はバラです": the speaker's favourite, said without 私の
    if JA_NAMED_TOPIC.match(clause) and len(clause) >= 7:
        return clause  # "クロエは猫アレルギーです": someone in the user's life, named, as NAMED_PERSON_EN keeps
    if JA_OWN_HAVING.match(clause):
        return clause  # "えびアレルギーがあります": the speaker's, as a Japanese statement leaves them out
    if JA_OWN_DOING.search(clause) and "が" not in clause and len(clause) >= 6:
        return clause  # "週末は山登りをしています": a Japanese statement names no subject when it is the speaker
    return None
