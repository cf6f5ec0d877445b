"""The shapes of a sentence the offline model reads (memoryx.models.offline): who it is about, whether it opens
on its verb, a fragment going on with the sentence before it, a date said as such, English as typed fast. Each
pattern says, with an example, what it recognises; the model decides what to keep. The patterns are grammar: the
words they name (<@offline.*>) are tables of memoryx/core/lexicon_data, one file per language."""

from __future__ import annotations

import re

from memoryx.core import lexicon
from memoryx.core.timeparse import mentions_time, names_date
from memoryx.models import offline_rules as rules

SENTENCE = re.compile(r"(?:[^.!?。！？\n]|(?<=\d)\.(?=\d))+[.!?。！？]*")  # (not at the point of "4.8")
FIRST_PERSON_EN = lexicon.compile(r"^(?:<@offline.first_person:en>|[A-Z][\w'’-]+ and I)\b", re.I)
# someone in the user's life named by name: "Daniel's birthday is on 12 March", "Marta works at a bakery"
NAMED_PERSON_EN = lexicon.compile(
    r"^(?!(?i:<@offline.not_a_person:en>)\b)[A-ZÀ-Ý][a-zß-ÿ]+"
    r"(?:['’]s\s+(?:\w+\s+){0,3}(?:is|are|was|were|has|had|got|just|will)|"
    r"\s+(?:<@offline.person_verb:en>|[a-z]+ed))\b")
# ... in two or three words, when it is news: "Marcus proposed", "Karen left" (not "Paris is lovely")
NAMED_NEWS_EN = lexicon.compile(r"^\S+\s+(?:\w+ed|<@offline.named_news:en>)(?:\s+\w+)?[.!]*$", re.I)
# a chat message's own news without its "I": "Just got back from Iceland", "Went hiking with Ana on Sunday"
NEWS_NO_SUBJECT_EN = lexicon.compile(r"^(?:<@offline.news_adverb:en>\s+)?<@offline.news_verb:en>\s", re.I)
# ... or what it is doing: "Learning to sail this summer" (the "I'm" left out)
DOING_NO_SUBJECT_EN = lexicon.compile(r"^(?:<@offline.doing_adverb:en>\s+)?<@offline.doing_verb:en>\s", re.I)
# any other statement opening on its verb: "Turned 40 today", "Heading to Paris next week" (kept as said: the verb
# may not take "I" as it stands)
VERB_FIRST_EN = lexicon.compile(r"^(?!<@offline.not_a_verb:en>\b)[a-z]{2,}(?:ed|ing)\s", re.I)
# the user as the subject of a later part: "The move is done, we're in Nottingham now"
FIRST_PERSON_LATER_EN = lexicon.compile(r"[,;]\s*(?:(?:and|but|so|now)\s+)?<@offline.first_person_subject:en>\b", re.I)
# a sentence about the user's things or plans that opens on what it is about: "The heating in my flat is broken",
# "The wedding is set for June 14th" (kept as said when it names something of the user's or a time)
THING_FIRST_EN = re.compile(r"^the\s+\w+(?:\s+[\w'’-]+){0,4}?\s+(?:is|are|was|were|has|have|had|will|got|\w+ed)\b",
                            re.I)
# ... or, typed without "the", when it is: "exam is on the 14th of jan", "interview's at 3 tomorrow"
SCHEDULED_EN = lexicon.compile(r"^(?!<@offline.not_a_thing:en>\b)[a-z]\w*(?:\s+\w+){0,2}?"
                               r"(?:\s+(?:is|are|was|were)|['’]s)\s+<@offline.scheduled:en>\b", re.I)


def says_when(clause: str) -> bool:
    """The clause says when: a relative date ("next week") or a date said as such ("on the 14th of jan")."""
    return mentions_time(clause) or names_date(clause)


# someone of the user's family typed without "my": "mum's birthday is 2nd of june", "dad is retiring"
FAMILY_FIRST_EN = lexicon.compile(r"^<@offline.family:en>"
                             r"(?:['’]s\s+\w+|\s+(?:is|was|has|had|got|just|\w+s|\w+ed))\b", re.I)
# a greeting or filler before what is said: "hey I'm zoe", "btw I'm gluten free", "ok so I moved"
FILLER_EN = lexicon.compile(r"^(?:<@offline.filler:en>\b[\s,!.:-]*)+", re.I)
# what the user asks the assistant to keep, before the fact itself: "Remember that I'm allergic to penicillin",
# "FYI my name's Kenji", "Note: ...", "请记住，...", "覚えておいて：..." (the fact is what follows)
TOLD_TO_KEEP = lexicon.compile(
    # a label, then anything: "FYI my name's Kenji", "Note: ...", "Update: I switched teams"
    r"^<@offline.keep_label:en>\s*[:,\-–—]\s*|^<@offline.keep_aside:en>[:,\-–—]?\s+"
    # ... a request to keep, then a statement (not "Remember to call the plumber")
    r"|^(?:<@offline.please:en>\s+)?<@offline.keep_request:en>"
    r"(?:\s+(?:of\s+)?that)?[:,]?\s+(?=(?:<@offline.first_person:en>|(?-i:[A-Z])[\w'’-]*)\b)"
    r"|^(?:请|請)?<@offline.keep_request:zh>(?:一下)?[：:，,、]\s*"
    r"|^<@offline.keep_request:ja>(?:ください|ね)?[：:、，,]\s*|^メモ[：:]\s*", re.I)
# a statement said before the question it leads to, in one sentence: "Our anniversary is on 12 October, any gift
# ideas for Arjun?", "我女儿下个月生日，送什么好？" (the part before the comma is kept)
STATEMENT_BEFORE_QUESTION = lexicon.compile(r"^(<@offline.first_person:en>\s[^,?]{8,}?),\s*\S"
                                       r"|^((?:我|私)[^，、？?]{4,}?)[，、]\s*\S", re.I)
# the user's family named by its role, as Chinese says it without 我的: "双胞胎女儿在学钢琴", "老公下周出差"
ZH_FAMILY_TOPIC = lexicon.compile(r"^(?![我用])[\u4e00-\u9fff]{0,3}?<@offline.family:zh>(?!吗)")
# ... or by a name, as the topic of what they do or have: "王磊最近在学弹吉他", "朵朵的好朋友叫小米" (a two- or
# three-character name, then what is said of them; not a time, a place or a pronoun: "今天天气很好")
ZH_NAMED_TOPIC = lexicon.compile(r"^(?!<@offline.not_a_name:zh>)[\u4e00-\u9fff]{2,3}"
                                 r"(?:<@offline.after_name:zh>|的[\u4e00-\u9fff]{1,3}(?:叫|是))")
# a figure after a statement: "passed the anatomy exam!! 78%"
FIGURE_FRAGMENT = re.compile(r"^[$€£]?\d[\d.,:/]*\s*(?:%|[a-z]{1,8})?[.!]*$", re.I)
# a request about something of the user's, then when it is: "Write a short speech for my sister Nadia's wedding, it's
# on 14 June in Swansea" (kept when it says when)
REQUEST_THEN_WHEN_EN = lexicon.compile(r"^(?:please\s+)?<@offline.request_verb:en>\b[^,]*\b(?:my|our)\b[^,]*,\s*"
                                       r"<@offline.it_is:en>\s", re.I)
# what happened to the user, said with them as its object: "Maple Pay laid off half the team, including me",
# "My boss promoted me" (not a request: those open on the verb or on "please", "can you")
USER_AS_OBJECT_EN = lexicon.compile(r"^(?!<@offline.request_opener:en>\b)[A-Za-z].*\b(?:me|us)\b", re.I)
# a sentence going on about what the one before it named: "Churro ate my shoe. He's 8 months old"
PRONOUN_GOES_ON_EN = re.compile(r"^(?:he|she|they|it)(?:['’](?:s|re)\b|\s+(?:is|are|was|were|has|had|will|can|"
                                r"\w+s|\w+ed)\b)", re.I)
# ... its pronoun, and a name inside a question before it (not its first word): "plan a party for Leo?"
PRONOUN_SUBJECT_EN = re.compile(r"^(?:he|she|they)(?=['’\s])", re.I)
NAME_IN_QUESTION_EN = re.compile(r"(?<=\s)(?!(?:I|I'm|I've|I'd|I'll)\b)[A-ZÀ-Ý][a-zß-ÿ]+\b")
# a short verbless fragment after a statement: "Green tea only.", "Every Sunday."
FRAGMENT_EN = lexicon.compile(r"^(?!<@offline.pronoun:en>\b)[A-Za-z][\w'’-]*(?:\s+[\w'’-]+){0,3}[.!]?$",
                         re.I)
VERBISH = lexicon.compile(r"\b(?:<@offline.auxiliary:en>|\w+ed|\w+ing)\b", re.I)
# a fragment naming what the sentence before it is about: "We got a puppy! A border collie called Fern."
NAMING_FRAGMENT = re.compile(r"([.!?])\s+(?=(?:A|An)\s+[^.!?]{0,60}?\b(?:called|named)\s+[A-Z]"
                             r"|(?:Her|His|Its|Their)\s+names?\s+(?:is|are)\s+[A-Z])")
# ... in Chinese or Japanese: "娘が生まれました！名前はマヤです。"
NAMING_FRAGMENT_CJK = lexicon.compile(r"^(?:<@offline.naming:ja>|<@offline.naming:zh>)")
# "Favourite band at the moment: Arctic Monkeys": a favourite said as a label and its value
FAVOURITE_LABEL_EN = lexicon.compile(r"^(?:my\s+)?(favou?rite\s+\w+(?:\s+\w+)??)(?:\s+<@offline.for_now:en>)?"
                                     r"\s*:\s*(.+)$", re.I)
# "I'm from Seville": where the user comes from, short as it is (group 1: "come", else a form of "be")
ORIGIN_EN = re.compile(r"^i(?:'m|\s+am|\s+(come))(?=\s+(?:originally\s+)?from\s+[A-Z])", re.I)
# the user's family named by its role, as Japanese does without 私の: "妹は来年結婚します"
JA_FAMILY_TOPIC = lexicon.compile(r"^(?:<@offline.family:ja>|(?:上|下|一番上|一番下)の(?:子|娘|息子))(?:は|が|の(?!日))")
# a favourite said without 私の: "一番好きな花はバラです", "好きな食べ物は寿司です"
JA_FAVOURITE = lexicon.compile(r"^<@offline.most:ja>?好きな[^、。はが]{1,10}は")
# ... or by a name written in katakana, as foreign names are: "クロエは猫アレルギーです"
JA_NAMED_TOPIC = lexicon.compile(r"^[ァ-ヴー]{2,8}(?:さん|くん|ちゃん)?(?:は|が)(?!<@offline.question_word:ja>)")
# what the speaker does or did, said without a subject (が would name another one): ～ています / ～ていました / ～ました
JA_OWN_DOING = re.compile(r"(?:ています|ていました|ました|ます|てる|てた|(?:予定|つもり)(?:です|だ))[。！]?$")
# what the speaker has, said with が and no topic: "えびアレルギーがあります", "持病があります" (not "雨が降っています",
# nor where something is: "駅の近くに公園があります")
JA_OWN_HAVING = re.compile(r"^[^はに、。]{2,14}が(?:あります|ありました|あって|ある)[。！]?$")
# --- a Chinese or Japanese sentence no rule reads is kept as said when it is a statement (memoryx.models.offline)
# something of the speaker's or someone's: a figure, the speaker ("我", "私", "うち")
PARTICULAR_CJK = lexicon.compile(r"[\d０-９二三四五六七八九十百千万两]|<@offline.particular:zh>|<@offline.particular:ja>")
# who someone in the speaker's life is, said of a topic (は/が, 是): named with an honorific, or called a person, at
# the end of what is said ("店長は松本さん", "上司は厳しい人です", "班主任是陈老师", "房东是个很好说话的人")
JA_SAYS_WHO = lexicon.compile(r"^[^、。？?]{1,15}?(?:は|が)[^。？?]*?<@offline.person_marker:ja>"
                              r"(?:です|だ|でした|だった)?[。！!]*$")
ZH_SAYS_WHO = lexicon.compile(r"^[^，。？?]{1,10}?是[^。？?]*?<@offline.person_marker:zh>[。！!]*$")
# ... or their name ("犬の名前はポチ", "老板姓王", "狗狗叫豆豆"; not "他叫我去", he told me to go)
JA_NAMES = lexicon.compile(r"^[^、。？?]{0,12}?<@offline.name_word:ja>(?:は|が)[^、。？?]{1,15}?(?:です|だ)?[。！!]*$")
ZH_NAMES = lexicon.compile(r"^[^，。？?]{1,10}?<@offline.name_word:zh>(?![我你他她它])[^，。？?\s]{1,6}[。！!]*$")
# a remark that asks for agreement ("今日は暑いね", "好累啊"): small talk, unless it says something particular
REMARK_CJK = lexicon.compile(r"(?:<@offline.remark_end:ja>|<@offline.remark_end:zh>)[。！!～~…]*$")


def says_who(clause: str, lang: str) -> bool:
    """A Chinese or Japanese statement of who someone is or what they are called (see JA_SAYS_WHO, JA_NAMES)."""
    if lang == "ja":
        return bool(JA_SAYS_WHO.match(clause) or JA_NAMES.match(clause))
    return lang == "zh" and bool(ZH_SAYS_WHO.match(clause) or ZH_NAMES.match(clause))


# the canonical person of a sentence kept as said: "I'm ..." -> "User is ...", "My ..." -> "User's ..."
EN_REWRITE = lexicon.compile(r"^<@offline.rewrite:en>\b", re.I)


def rewritten_en(clause: str) -> str | None:
    """The clause in the canonical person, or None when it opens on no form the table rewrites."""
    m = EN_REWRITE.match(clause)
    if not m:
        return None
    said = re.sub(r"\s+", " ", m.group(0).lower().replace("’", "'"))
    return lexicon.mapping("offline.rewrite", "en")[said] + clause[m.end():]


# English as typed fast: "im", "dont", "shes", a lower-case "i" (the rules read the written forms)
TYPED_FORMS = lexicon.mapping("offline.typed_form", "en")
TYPED = lexicon.compile(r"(?<![\w'’.])(<@offline.typed_form:en>)(?![\w'’])", re.I)


def written_english(text: str) -> str:
    """A message typed as chats are ("im zoe, i dont eat meat") in the forms the rules read ("I'm zoe, I don't
    eat meat"); other languages as they are."""
    if rules.detect_language(text) != "en":
        return text
    return TYPED.sub(lambda m: TYPED_FORMS[m.group(1).lower()] if m.group(1) != "I" else "I", text)
