"""The shapes of a sentence the offline model reads (memoryx.models.offline): who it is about, whether it opens
on its verb, a fragment going on with the sentence before it, a date said as such, English as typed fast. Each
pattern says, with an example, what it recognises; the model decides what to keep."""

from __future__ import annotations

import re

from memoryx.core.timeparse import mentions_time, names_date
from memoryx.models import offline_rules as rules

SENTENCE = re.compile(r"(?:[^.!?。！？\n]|(?<=\d)\.(?=\d))+[.!?。！？]*")  # (not at the point of "4.8")
FIRST_PERSON_EN = re.compile(r"^(?:i|i'm|i've|my|we|we're|we've|our|[A-Z][\w'’-]+ and I)\b", re.I)
# someone in the user's life named by name: "Daniel's birthday is on 12 March", "Marta works at a bakery"
NAMED_PERSON_EN = re.compile(
    r"^(?!(?:It|This|That|There|Here|Today|Yesterday|Tomorrow|What|Who|When|Where|Why|How|The|He|She|They|You|"
    r"Everyone|Everybody|Nobody|Someone|Somebody|Just|Finally|Recently|Also|Really|Actually|Honestly|Anyway|Then|"
    r"So|Well|Still|Now)\b)[A-ZÀ-Ý][a-zß-ÿ]+(?:['’]s\s+(?:\w+\s+){0,3}(?:is|are|was|were|has|had|got|just|will)|"
    r"\s+(?:is|was|works|lives|has|had|likes|loves|plays|studies|teaches|runs|owns|got|went|sold|bought|made|took|"
    r"gave|found|left|began|won|lost|broke|came|became|hurt|fell|ate|bit|caught|cut|drove|flew|grew|hit|kept|met|"
    r"wants|needs|goes|gets|starts|turns|thinks|takes|makes|keeps|tries|visits|joins|leaves|hates|"
    r"paid|ran|rode|said|sang|saw|sent|spent|swam|taught|told|wrote|[a-z]+ed))\b")
# ... in two or three words, when it is news: "Marcus proposed", "Karen left" (not "Paris is lovely")
NAMED_NEWS_EN = re.compile(r"^\S+\s+(?:\w+ed|left|quit|won|lost|passed\s+away)(?:\s+\w+)?[.!]*$", re.I)
# a chat message's own news without its "I": "Just got back from Iceland", "Went hiking with Ana on Sunday"
NEWS_NO_SUBJECT_EN = re.compile(
    r"^(?:(?:just|finally|recently|also)\s+)?(?:got|went|came|had|bought|finished|started|visited|saw|met|took|"
    r"tried|booked|adopted|won|ran|spent|watched|cooked|flew|drove|passed|sold|can't|cannot|don't|love|hate|need|"
    r"gave|quit|stopped|switched|joined|signed|picked|found|lost|made|paid|dropped|broke|been)\s",
    re.I)
# ... or what it is doing: "Learning to sail this summer" (the "I'm" left out)
DOING_NO_SUBJECT_EN = re.compile(r"^(?:(?:just|finally|still|also)\s+)?(?:learning|training|planning|trying|working|"
                                 r"studying|reading|saving|looking|going|doing|taking|making|playing|getting)\s",
                                 re.I)
# any other statement opening on its verb: "Turned 40 today", "Heading to Paris next week" (kept as said: the verb
# may not take "I" as it stands)
VERB_FIRST_EN = re.compile(r"^(?!(?:morning|evening|nothing|something|anything|everything|during|meeting|wedding|"
                           r"building|ceiling|spring|thing|king|red|bed|need|seed|feed|speed|weed)\b)"
                           r"[a-z]{2,}(?:ed|ing)\s", re.I)
# the user as the subject of a later part: "The move is done, we're in Nottingham now"
FIRST_PERSON_LATER_EN = re.compile(r"[,;]\s*(?:(?:and|but|so|now)\s+)?(?:i|i'm|i've|we|we're|we've)\b", re.I)
# a sentence about the user's things or plans that opens on what it is about: "The heating in my flat is broken",
# "The wedding is set for June 14th" (kept as said when it names something of the user's or a time)
THING_FIRST_EN = re.compile(r"^the\s+\w+(?:\s+[\w'’-]+){0,4}?\s+(?:is|are|was|were|has|have|had|will|got|\w+ed)\b",
                            re.I)
# ... or, typed without "the", when it is: "exam is on the 14th of jan", "interview's at 3 tomorrow"
SCHEDULED_EN = re.compile(r"^(?!(?:it|this|that|there|here|he|she|they|you|we|weather)\b)[a-z]\w*(?:\s+\w+){0,2}?"
                          r"(?:\s+(?:is|are|was|were)|['’]s)\s+(?:on|at|in|set for|planned for|scheduled for|due)\b", re.I)


def says_when(clause: str) -> bool:
    """The clause says when: a relative date ("next week") or a date said as such ("on the 14th of jan")."""
    return mentions_time(clause) or names_date(clause)


# someone of the user's family typed without "my": "mum's birthday is 2nd of june", "dad is retiring"
FAMILY_FIRST_EN = re.compile(r"^(?:mum|mom|dad|mother|father|sister|brother|wife|husband|son|daughter|grandma|"
                             r"grandpa|nan|gran|granny|bf|gf|boyfriend|girlfriend|partner|fiance|fiancee)"
                             r"(?:['’]s\s+\w+|\s+(?:is|was|has|had|got|just|\w+s|\w+ed))\b", re.I)
# a greeting or filler before what is said: "hey I'm zoe", "btw I'm gluten free", "ok so I moved"
FILLER_EN = re.compile(r"^(?:(?:hey|hi|hello|hiya|yo|morning|ok|okay|so|btw|lol|omg|ugh|well|anyway)\b[\s,!.:-]*)+",
                       re.I)
# what the user asks the assistant to keep, before the fact itself: "Remember that I'm allergic to penicillin",
# "FYI my name's Kenji", "Note: ...", "请记住，...", "覚えておいて：..." (the fact is what follows)
TOLD_TO_KEEP = re.compile(
    # a label, then anything: "FYI my name's Kenji", "Note: ...", "Update: I switched teams"
    r"^(?:(?:please\s+)?note|fyi|just\s+fyi|(?:quick\s+|small\s+)?update|reminder|heads\s+up|for\s+(?:future\s+)?reference"
    r"|for\s+the\s+record)\s*[:,\-–—]\s*|^(?:fyi|just\s+so\s+you\s+know)[:,\-–—]?\s+"
    # ... a request to keep, then a statement (not "Remember to call the plumber")
    r"|^(?:(?:please|pls|plz)\s+)?(?:remember|note|keep\s+in\s+mind|don['’]?t\s+forget|never\s+forget|make\s+a\s+note)"
    r"(?:\s+(?:of\s+)?that)?[:,]?\s+(?=(?:i|i'm|i've|my|we|we're|we've|our|(?-i:[A-Z])[\w'’-]*)\b)"
    r"|^(?:请|請)?(?:记住|記住|记一下|记得|备注|備註)(?:一下)?[：:，,、]\s*"
    r"|^(?:覚えておいて|覚えといて|メモして)(?:ください|ね)?[：:、，,]\s*|^メモ[：:]\s*", re.I)
# a statement said before the question it leads to, in one sentence: "Our anniversary is on 12 October, any gift
# ideas for Arjun?", "我女儿下个月生日，送什么好？" (the part before the comma is kept)
STATEMENT_BEFORE_QUESTION = re.compile(r"^((?:i|i'm|i've|my|we|we're|we've|our)\s[^,?]{8,}?),\s*\S"
                                       r"|^((?:我|私)[^，、？?]{4,}?)[，、]\s*\S", re.I)
# the user's family named by its role, as Chinese says it without 我的: "双胞胎女儿在学钢琴", "老公下周出差"
ZH_FAMILY_TOPIC = re.compile(r"^(?![我用])[\u4e00-\u9fff]{0,3}?(?:女儿|儿子|老公|老婆|丈夫|妻子|太太|妈妈|爸爸|母亲|父亲|父母|爸妈|"
                             r"哥哥|弟弟|姐姐|妹妹|奶奶|爷爷|外婆|外公|孩子|男朋友|女朋友|孙子|孙女)(?!吗)")
# ... or by a name, as the topic of what they do or have: "王磊最近在学弹吉他", "朵朵的好朋友叫小米" (a two- or
# three-character name, then what is said of them; not a time, a place or a pronoun: "今天天气很好")
ZH_NAMED_TOPIC = re.compile(r"^(?!(?:今天|明天|昨天|现在|最近|这个|那个|这里|那里|我们|你们|他们|她们|大家|天气|北京|上海|东京|"
                            r"工作|公司|学校|时间|这|那|你|他|她|它|我|用户))[\u4e00-\u9fff]{2,3}"
                            r"(?:最近|现在|已经|刚刚|刚|正在|开始|下个月|明年|今年|每天|在学|在|要|会|喜欢|的[\u4e00-\u9fff]{1,3}(?:叫|是))")
# a figure after a statement: "passed the anatomy exam!! 78%"
FIGURE_FRAGMENT = re.compile(r"^[$€£]?\d[\d.,:/]*\s*(?:%|[a-z]{1,8})?[.!]*$", re.I)
# a request about something of the user's, then when it is: "Write a short speech for my sister Nadia's wedding, it's
# on 14 June in Swansea" (kept when it says when)
REQUEST_THEN_WHEN_EN = re.compile(r"^(?:please\s+)?(?:write|help|plan|make|draft|book|find|organi[sz]e|prepare|create|"
                                  r"suggest|recommend|remind)\b[^,]*\b(?:my|our)\b[^,]*,\s*"
                                  r"(?:it['’]s|it\s+is|which\s+is|that['’]s|they['’]re)\s", re.I)
# what happened to the user, said with them as its object: "Maple Pay laid off half the team, including me",
# "My boss promoted me" (not a request: those open on the verb or on "please", "can you")
USER_AS_OBJECT_EN = re.compile(r"^(?!(?:please|can|could|would|will|let|help|tell|give|show|make|remind|send|"
                               r"ask|call|thank|thanks|get|find|write|do|don't)\b)[A-Za-z].*\b(?:me|us)\b", re.I)
# a sentence going on about what the one before it named: "Churro ate my shoe. He's 8 months old"
PRONOUN_GOES_ON_EN = re.compile(r"^(?:he|she|they|it)(?:['’](?:s|re)\b|\s+(?:is|are|was|were|has|had|will|can|"
                                r"\w+s|\w+ed)\b)", re.I)
# ... its pronoun, and a name inside a question before it (not its first word): "plan a party for Leo?"
PRONOUN_SUBJECT_EN = re.compile(r"^(?:he|she|they)(?=['’\s])", re.I)
NAME_IN_QUESTION_EN = re.compile(r"(?<=\s)(?!(?:I|I'm|I've|I'd|I'll)\b)[A-ZÀ-Ý][a-zß-ÿ]+\b")
# a short verbless fragment after a statement: "Green tea only.", "Every Sunday."
FRAGMENT_EN = re.compile(r"^(?!(?:i|we|my|our|it|this|that|you|he|she|they)\b)[A-Za-z][\w'’-]*(?:\s+[\w'’-]+){0,3}[.!]?$",
                         re.I)
VERBISH = re.compile(r"\b(?:is|are|was|were|am|be|been|have|has|had|do|does|did|can|will|would|go|went|got|\w+ed|\w+ing)\b",
                     re.I)
# a fragment naming what the sentence before it is about: "We got a puppy! A border collie called Fern."
NAMING_FRAGMENT = re.compile(r"([.!?])\s+(?=(?:A|An)\s+[^.!?]{0,60}?\b(?:called|named)\s+[A-Z]"
                             r"|(?:Her|His|Its|Their)\s+names?\s+(?:is|are)\s+[A-Z])")
# ... in Chinese or Japanese: "娘が生まれました！名前はマヤです。"
NAMING_FRAGMENT_CJK = re.compile(r"^(?:名前は|名前が|名字叫|名字是|它叫|她叫|他叫)")
# "Favourite band at the moment: Arctic Monkeys": a favourite said as a label and its value
FAVOURITE_LABEL_EN = re.compile(r"^(?:my\s+)?(favou?rite\s+\w+(?:\s+\w+)??)(?:\s+(?:at the moment|right now|"
                                r"these days|ever|of all time))?\s*:\s*(.+)$", re.I)
# "I'm from Seville": where the user comes from, short as it is (group 1: "come", else a form of "be")
ORIGIN_EN = re.compile(r"^i(?:'m|\s+am|\s+(come))(?=\s+(?:originally\s+)?from\s+[A-Z])", re.I)
# the user's family named by its role, as Japanese does without 私の: "妹は来年結婚します"
JA_FAMILY_TOPIC = re.compile(r"^(?:妹|姉|兄|弟|母|父|夫|妻|娘|息子|彼女|彼氏|祖母|祖父|(?:上|下|一番上|一番下)の(?:子|娘|息子)|"
                             r"長男|長女|次男|次女|子供|子ども)(?:は|が|の(?!日))")
# a favourite said without 私の: "一番好きな花はバラです", "好きな食べ物は寿司です"
JA_FAVOURITE = re.compile(r"^(?:一番|いちばん|最も)?好きな[^、。はが]{1,10}は")
# ... or by a name written in katakana, as foreign names are: "クロエは猫アレルギーです"
JA_NAMED_TOPIC = re.compile(r"^[ァ-ヴー]{2,8}(?:さん|くん|ちゃん)?(?:は|が)(?!何|どこ|いつ|誰)")
# what the speaker does or did, said without a subject (が would name another one): ～ています / ～ていました / ～ました
JA_OWN_DOING = re.compile(r"(?:ています|ていました|ました|ます|てる|てた|(?:予定|つもり)(?:です|だ))[。！]?$")
# what the speaker has, said with が and no topic: "えびアレルギーがあります", "持病があります" (not "雨が降っています",
# nor where something is: "駅の近くに公園があります")
JA_OWN_HAVING = re.compile(r"^[^はに、。]{2,14}が(?:あります|ありました|あって|ある)[。！]?$")
EN_REWRITES = [
    (re.compile(r"^i am\b", re.I), "User is"),
    (re.compile(r"^i'm\b", re.I), "User is"),
    (re.compile(r"^i have\b", re.I), "User has"),
    (re.compile(r"^i've\b", re.I), "User has"),
    (re.compile(r"^i was\b", re.I), "User was"),
    (re.compile(r"^my\b", re.I), "User's"),
]


# English as typed fast: "im", "dont", "shes", a lower-case "i" (the rules read the written forms)
TYPED_FORMS = {"im": "I'm", "ive": "I've", "dont": "don't", "didnt": "didn't", "doesnt": "doesn't", "isnt": "isn't",
                "wasnt": "wasn't", "arent": "aren't", "havent": "haven't", "hasnt": "hasn't", "cant": "can't",
                "couldnt": "couldn't", "wouldnt": "wouldn't", "shouldnt": "shouldn't", "shes": "she's",
                "thats": "that's", "theyre": "they're", "youre": "you're", "i": "I"}
TYPED = re.compile(r"(?<![\w'’.])(" + "|".join(TYPED_FORMS) + r")(?![\w'’])", re.I)


def written_english(text: str) -> str:
    """A message typed as chats are ("im zoe, i dont eat meat") in the forms the rules read ("I'm zoe, I don't
    eat meat"); other languages as they are."""
    if rules.detect_language(text) != "en":
        return text
    return TYPED.sub(lambda m: TYPED_FORMS[m.group(1).lower()] if m.group(1) != "I" else "I", text)
