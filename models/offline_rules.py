"""Rule parser of first-person statements, shared by the offline chat model and its graph half.

The offline model (memoryx.models.offline) is a demo and test model: it understands a small, documented
set of statements and nothing else. This module is that set: the grammar of each statement is here, its words
(the verbs, adverbs, greetings ... named <@offline.*> in the patterns) are tables of memoryx.core.lexicon. Each
statement is parsed into a `Statement` (attribute, value, polarity, language); `fact_text` renders the canonical
memory text for it, and the same parser reads those canonical texts back, so existing memories can be compared
with new facts.

Covered statements (first person, and the canonical third-person form the offline model stores). Each rule
is a sentence shape, not a list of sentences: a short lead-in before it ("Big news: ...", "So ...",
"好消息：...", "実は、...") is skipped, an English statement may leave out its "I" as chat messages do ("Just
moved to Leeds!", "I left the bank and joined Fernwood") or end in a remark after a comma ("..., love it
here"), and a like of several things ("I like A, B and C", "我喜欢A和B", "私はAとBが好きです") is one statement
per thing (`parse_clause`).

=========== =============================== ======================== ============================
attribute   English                         Chinese                  Japanese
=========== =============================== ======================== ============================
name        My name is X / Call me X /      我叫X / 我的名字是X /    私の名前はXです /
            I'm X (capitalised, 1-2 words)  (greeting)我是X          私はXと申します / はじめまして、Xです
home        I/we live in X / I'm based in X 我(们)住在X              私はXに住んでいます
move        I/we (have) moved to X /        我(们)搬(家)到X          Xに/へ引っ越しました /
            my wife and I relocated to X                             Xに引っ越してきました
work        I work at/for X / I joined X /  我在X工作 / 我在X上班 /  私はXで働いています /
            I started working at X /        我加入了X / 我入职了X    Xに入社しました / Xに勤めています
            I got a job at X /
            I'm a <position> at X /
            ... at X as a <position>
leaving     I quit/left/resigned from X     我从X辞职了 / 我离开了X  Xを辞めました / Xを退職しました /
            (X capitalised: an employer)    我不在X工作了            もうXで働いていません
like        I like/love/enjoy/adore X /     我喜欢X / 我爱X          私はXが好きです /
            I'm into X / I'm a fan of X                              Xにハマっています
retraction  I don't like X anymore /        我不再喜欢X /            もうXが好きではありません /
            I stopped liking X / I've gone  我不喜欢X了 /            Xが好きじゃなくなりました /
            off X / I'm not into X anymore  我对X没兴趣了            Xに飽きました
=========== =============================== ======================== ============================

Canonical fact texts: "User's name is X", "User lives in X", "User now lives in X" (a move), "User works
at X" ("User works at X as a <position>" when one is named), "User likes X", "User no longer likes X" /
"用户叫X", "用户住在X", "用户现在住在X", "用户在X工作", "用户喜欢X", "用户不再喜欢X" / "ユーザーの名前はX", "ユーザーはXに住んでいる", "ユーザーは今Xに住んでいる",
"ユーザーはXで働いている", "ユーザーはXが好き", "ユーザーはもうXが好きではない". A move is stored as the new
home ("now lives in"), so it shares words with the old home memory and retrieval finds the memory to update.

Single-valued attributes are name, home (a move sets home) and work: a new value UPDATEs the old memory.
A retraction DELETEs the matching like, and leaving a job the matching work memory ("User no longer works
at X", "用户不再在X工作", "ユーザーはもうXで働いていない"); the retraction itself is kept as a fact. Anything else is not understood by
these rules.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from memoryx.core import lexicon
from memoryx.core.text import KANA

SINGLE_VALUED = frozenset({"name", "home", "work"})

# relation names used by the offline graph extraction: timeless, consistent, in the statement's language
RELATION_NAMES = {attribute: {lang: lexicon.mapping("offline.relation", lang)[attribute] for lang in lexicon.LANGUAGES}
                  for attribute in ("name", "home", "work", "like")}
ENTITY_TYPES = {"name": "person", "home": "location", "work": "organization", "like": "thing"}


@dataclass(frozen=True)
class Statement:
    """One parsed statement about the user.

    attribute: name | home | work | like (a move is attribute "home" with verb "move").
    polarity: False only for a retraction of a like ("I don't like X anymore").
    """

    attribute: str
    value: str
    polarity: bool = True
    lang: str = "en"
    verb: str = ""  # "move" for moves, "" otherwise
    person: str = "first"  # "first" (I/我/私) or "third" (the canonical User/用户/ユーザー form)
    role: str = ""  # work: the position held there ("a staff engineer"), English only

    @property
    def single_valued(self) -> bool:
        return self.attribute in SINGLE_VALUED

    @property
    def key(self) -> tuple[str, str]:
        # a new position at the same employer is a new value of the work attribute
        return (self.attribute, normalize_value(f"{self.value} {self.role}".strip()))

    def relation(self) -> str:
        return RELATION_NAMES[self.attribute][self.lang]


# ------------------------------------------------------------------------------------------- language


_CJK = re.compile(r"[\u4e00-\u9fff]")


def detect_language(text: str) -> str:
    """'ja' when kana are present, 'zh' for other CJK text, else 'en'."""
    if KANA.search(text or ""):
        return "ja"
    if _CJK.search(text or ""):
        return "zh"
    return "en"


def normalize_value(value: str) -> str:
    v = unicodedata.normalize("NFKC", value or "").strip().lower()
    v = re.sub(r"^(?:the|a|an)\s+", "", v)
    return re.sub(r"\s+", " ", v)


# ------------------------------------------------------------------------------------------- patterns
# The grammar of each statement is here; its words (<@offline.*>) are tables of memoryx/core/lexicon_data.

_EN_VALUE = r"(?P<v>[^,.;!?]+?)"
_EN_VALUES = r"(?P<v>[^.;!?]+?)"  # liked things may be a list: "sushi, ramen and tea"
# a time after a state ("I left Google last month"): the date is the message's business, not the value's
_EN_TAIL_TIME = lexicon.compile(r"\s+(?:(?:last|this|next)\s+\w+|<@offline.tail_time:en>|\w+\s+\w+\s+ago|\w+\s+ago"
                                r"|(?:from|starting|in)\s+<@offline.month:en>)$", re.I)
_EN_END = r"(?:\s+<@offline.clause_end:en>)*\s*$"
_ADV = r"(?:<@offline.adverb:en>\s+)*"

_WE = r"(?:i|we|my\s+\w+\s+and\s+i)"  # the user, alone or with their household ("my wife and I moved")
_EN_UNLIKE = (r"(?:<@offline.negation:en>\s+{a}<@offline.retracted_like:en>|(?:have\s+|'ve\s+)?"
              r"(?:stopped|quit)\s+<@offline.liking:en>|(?:'m|am)\s+{a}(?:not|no longer)\s+(?:into|a fan of)|"
              r"(?:have\s+|'ve\s+)?(?:gone|went)\s+off|(?:got|grew|am|'m)\s+<@offline.weary:en>\s+of)").format(a=_ADV)
_EN_LIKE = r"(?:<@offline.like_verb:en>|(?:'m|am)\s+{a}(?:into|fond of|a\s+(?:big\s+|huge\s+)?fan of))".format(a=_ADV)
_GOT_A_JOB = r"<@offline.took_on:en>\s+a\s+(?:<@offline.job_kind:en>\s+)?job"  # "landed a new job"
_EN_WORK = (r"(?:(?:work|(?:'m|am)\s+{a}working|(?:have|'ve)\s+been\s+working|(?:started|began)\s+(?:working|a\s+(?:new\s+)?job)|"
            r"{g}|(?:'m|am)\s+employed)\s+(?:at|for|with|by))").format(a=_ADV, g=_GOT_A_JOB)
_EN_LEFT = (r"(?:quit|left|resigned\s+from|(?:'m|am)\s+leaving|(?:have|'ve)\s+left|(?:no longer|don't|do not)\s+work\s+"
            r"(?:at|for)|(?:stopped|quit)\s+working\s+(?:at|for))\s+(?:my\s+job\s+(?:at|with)\s+)?")

_NOT_NAMES = lexicon.words("offline.not_a_name", "en")  # what "hey im ..." says instead of a name

_EN_PATTERNS: list[tuple[str, str, bool, re.Pattern]] = [  # compiled below
    # (attribute, verb, polarity, pattern) -- retractions first, they contain the like verbs
    ("like", "", False, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:\s+|(?='))\s*{_ADV}{_EN_UNLIKE}\s+{_EN_VALUES}{_EN_END}", re.I)),
    ("like", "", False, lexicon.compile(rf"^(?:user|the user)\s+(?:no longer|doesn't|does not)\s+(?:likes?|loves?|enjoys?)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("work", "leave", False, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:\s+|(?='))\s*{_ADV}{_EN_LEFT}{_EN_VALUE}{_EN_END}", re.I)),
    ("work", "", False, lexicon.compile(rf"^(?:user|the user)\s+no longer works\s+(?:at|for)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("name", "", True, lexicon.compile(rf"^<@offline.greeting:en>?[\s,!]*<@offline.named:en>\s+{_EN_VALUE}{_EN_END}", re.I)),
    # "I'm Sam" / "Hi, I am Sam Lee": a name only when capitalised, one or two words and nothing after it
    ("name", "intro", True, lexicon.compile(r"^(?i:<@offline.greeting:en>?[\s,!]*(?:i'm|i am|this is|it's))\s+(?P<v>[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)(?i:\s+here)?$")),
    # "hey im zoe, ...": typed in lower case, a name after a greeting, alone before the comma
    ("name", "intro", True, lexicon.compile(r"^(?i:<@offline.greeting:en>)(?i:\s+there)?[\s,!]+(?i:i'm|i am)\s+"
                                       r"(?P<v>[a-z][a-z'-]+)$")),
    # "hey there, Bruno here": the name alone, then "here", after a greeting
    ("name", "intro", True, lexicon.compile(r"^(?i:<@offline.greeting:en>(?:\s+there|\s+all|\s+everyone)?[\s,!]+)?"
                                       r"(?!(?i:<@offline.pronoun_subject:en>)\b)"
                                       r"(?P<v>[A-ZÀ-Ý][a-zß-ÿ'-]+)(?i:\s+here)$")),
    ("name", "", True, lexicon.compile(rf"^(?:user's name is|the user's name is|name is)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "move", True, lexicon.compile(rf"^(?:but\s+|and\s+)?{_WE}\s+{_ADV}(?:have\s+|'ve\s+)?{_ADV}(?:moved|relocated)\s+(?:over\s+)?(?:in)?to\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "move", True, lexicon.compile(rf"^(?:user|the user)\s+(?:has\s+)?(?:moved|relocated)\s+to\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "", True, lexicon.compile(rf"^(?:but\s+|and\s+)?(?:{_WE}\s+{_ADV}live|(?:i'm|i am|we're|we are)\s+{_ADV}(?:living|based))\s+in\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "", True, lexicon.compile(rf"^(?:user|the user)\s+(?:now\s+|currently\s+)?lives\s+in\s+{_EN_VALUE}{_EN_END}", re.I)),
    # "I'm now in a two-bed flat in Reading": a home, then where it is
    ("home", "", True, lexicon.compile(rf"^(?:but\s+|and\s+)?(?:i'm|i am|we're|we are)\s+{_ADV}(?:living\s+)?in\s+(?:a|an|the|our|my)\s+"
                                  rf"(?:[\w-]+\s+){{0,3}}?<@offline.dwelling:en>\s+in\s+"
                                  rf"{_EN_VALUE}{_EN_END}", re.I)),
    # "Mississauga is home now", "home is Porto these days": the place, capitalised
    ("home", "", True, lexicon.compile(rf"^(?P<v>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)\s+is\s+(?i:(?:my\s+|our\s+)?home){_EN_END}")),
    ("home", "", True, lexicon.compile(rf"^(?i:(?:my\s+|our\s+)?home\s+is\s+(?:now\s+)?)(?P<v>[A-Z][^,.;!?]*?){_EN_END}")),
    ("work", "", True, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:\s+|(?='))\s*{_ADV}{_EN_WORK}\s+{_EN_VALUE}{_EN_END}", re.I)),
    # "I'm a software engineer at a bank": the position and where it is held
    ("work", "title", True, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:'m|\s+am|'ll\s+be|\s+will\s+be)\s+{_ADV}(?:now\s+)?"
                                       rf"(?P<r>(?:a|an)\s+[a-z][a-z -]{{1,40}}?)"
                                       rf"\s+(?:at|for|with)\s+{_EN_VALUE}{_EN_END}", re.I)),
    # "I got an offer from Shopify, starting Monday": the employer the user is about to work for
    ("work", "join", True, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:\s+|(?='))\s*{_ADV}(?:have\s+|'ve\s+)?(?:got|accepted|took)\s+"
                                      rf"(?:an?\s+|the\s+)?(?:job\s+)?offer\s+(?:from|at|with)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("work", "join", True, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:\s+|(?='))\s*{_ADV}(?:have\s+|'ve\s+)?joined\s+{_EN_VALUE}{_EN_END}", re.I)),
    # "I'm moving to a tech startup as head of marketing": a move with a position is a new job, not a home
    ("work", "", True, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:'m|\s+am)\s+{_ADV}(?:moving|switching|going|starting)\s+"
                                      rf"(?:over\s+)?(?:to|at)\s+(?P<v>[^,.;!?]+?\s+as\s+<@offline.role_opener:en>\s[^,.;!?]+?){_EN_END}", re.I)),
    ("work", "", True, lexicon.compile(rf"^(?:user|the user)\s+works\s+(?:at|for)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("like", "", True, lexicon.compile(rf"^(?:but\s+|and\s+)?i(?:\s+|(?='))\s*{_ADV}{_EN_LIKE}\s+{_EN_VALUES}{_EN_END}", re.I)),
    ("like", "", True, lexicon.compile(rf"^(?:user|the user)\s+(?:likes|loves|enjoys)\s+{_EN_VALUE}{_EN_END}", re.I)),
]

_ZH_VALUE = r"(?P<v>[^，。！？；,.!?;\s]+?)"
_ZH_ADV = r"<@offline.adverb:zh>*"
_ZH_END = r"<@offline.clause_end:zh>?$"
_ZH_BUT = r"<@offline.but:zh>?"
_ZH_GREETING = r"(?:<@offline.greeting:zh>|hi|hello)[，,！!\s]*"
_ZH_PATTERNS: list[tuple[str, str, bool, re.Pattern]] = [
    ("like", "", False, lexicon.compile(rf"^{_ZH_BUT}(?:我|用户){_ZH_ADV}(?:不再|不)<@offline.retracted_like:zh>{_ZH_VALUE}{_ZH_END}")),
    ("like", "", False, lexicon.compile(rf"^{_ZH_BUT}(?:我|用户){_ZH_ADV}对{_ZH_VALUE}(?:没|不感)兴趣{_ZH_END}")),
    # "我(上个月)从腾讯辞职了": a short time before 从 is not the employer
    ("work", "leave", False, lexicon.compile(rf"^(?:我|用户){_ZH_ADV}(?:[^从，。]{{0,6}}从)?{_ZH_VALUE}辞职{_ZH_END}")),
    ("work", "leave", False, lexicon.compile(rf"^(?:我|用户){_ZH_ADV}<@offline.left_job:zh>{_ZH_VALUE}(?:的工作)?{_ZH_END}")),
    ("work", "", False, lexicon.compile(r"^(?:我|用户)" + _ZH_ADV + r"(?:不再|不)在(?P<v>[^，。！？；,.!?;\s]+?)(?:工作|上班)" + _ZH_END)),
    ("name", "", True, lexicon.compile(rf"^(?:你好|您好)?[，,！!]?(?:我|用户)<@offline.named:zh>{_ZH_VALUE}{_ZH_END}")),
    ("name", "intro", True, lexicon.compile(rf"^{_ZH_GREETING}我是{_ZH_VALUE}{_ZH_END}", re.I)),  # only after a greeting
    ("home", "move", True, lexicon.compile(rf"^{_ZH_BUT}(?:我|我们|用户){_ZH_ADV}搬(?:家)?(?:到了|到|去了|去){_ZH_VALUE}{_ZH_END}")),
    ("home", "", True, lexicon.compile(rf"^{_ZH_BUT}(?:我|我们|用户){_ZH_ADV}住在{_ZH_VALUE}{_ZH_END}")),
    ("work", "", True, lexicon.compile(r"^" + _ZH_BUT + r"(?:我|用户)" + _ZH_ADV + r"在(?P<v>[^，。！？；,.!?;\s]+?)(?:工作|上班)" + _ZH_END)),
    ("work", "", True, lexicon.compile(rf"^(?:我|用户){_ZH_ADV}<@offline.joined:zh>{_ZH_VALUE}{_ZH_END}")),
    ("like", "", True, lexicon.compile(rf"^{_ZH_BUT}(?:我|用户){_ZH_ADV}<@offline.like_verb:zh>{_ZH_VALUE}{_ZH_END}")),
]

_JA_VALUE = r"(?P<v>[^、。！？，,.!?\s]+?)"
_JA_TOPIC = r"(?:<@offline.i:ja>は|ユーザーは)?(?:もう|今は|最近は?)?"
_JA_PATTERNS: list[tuple[str, str, bool, re.Pattern]] = [
    ("like", "", False, lexicon.compile(rf"^(?:私は|ユーザーは)?もう{_JA_VALUE}が好きでは(?:ありません|ない)$")),
    ("like", "", False, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}(?:が|は)好きでは(?:なくなりました|なくなった)$")),
    ("like", "", False, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}(?:が|は)好きじゃ(?:ない|ありません|なくなりました|なくなった)(?:です)?$")),
    ("like", "", False, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}に飽き(?:ました|た|てしまいました)$")),
    ("work", "leave", False, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}を(?:辞め|退職し|やめ)(?:ました|た)$")),
    ("work", "", False, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}で(?:は)?(?:もう)?働いてい(?:ません|ない)$")),
    ("name", "", True, lexicon.compile(rf"^(?:私|ユーザー)の名前は{_JA_VALUE}(?:です)?$")),
    ("name", "", True, lexicon.compile(rf"^私は{_JA_VALUE}<@offline.named:ja>$")),
    ("name", "intro", True, lexicon.compile(rf"^<@offline.greeting:ja>[、,！!\s]*(?:私は)?{_JA_VALUE}です$")),
    ("home", "move", True, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}(?:に|へ)引っ越(?:し(?:ました|た)|して(?:きました|きた))$")),
    ("home", "", True, lexicon.compile(rf"^(?:私は|ユーザーは)?(?:今|現在)?{_JA_VALUE}に住んでい(?:ます|る)$")),
    ("work", "", True, lexicon.compile(rf"^(?:私は|ユーザーは)?{_JA_VALUE}で働いてい(?:ます|る)$")),
    ("work", "", True, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}に(?:入社し(?:ました|た)|勤めてい(?:ます|る))$")),
    ("like", "", True, lexicon.compile(rf"^(?:私は|ユーザーは)?{_JA_VALUE}が(?:大)?好き(?:です)?$")),
    ("like", "", True, lexicon.compile(rf"^{_JA_TOPIC}{_JA_VALUE}にハマってい(?:ます|る)$")),
]

_PATTERNS = {"en": _EN_PATTERNS, "zh": _ZH_PATTERNS, "ja": _JA_PATTERNS}
_THIRD_PERSON = re.compile(r"^(?:the\s+)?user\b|^name is|^用户|^ユーザー", re.I)

# clause splitting: sentence punctuation; English ", I" / " and I" / " but I"; Chinese commas
# "I left the bank and joined Fernwood": the second statement's "I" (or "we") is left out; it is put back, as a
# sentence of its own, before splitting
_ELIDED_I = lexicon.compile(r"\s+(?:and|but)\s+(?:then\s+)?(?=<@offline.elided_verb:en>\b)", re.I)
# (not at the point of a figure: "评分是4.8分", "$4.50")
_SPLIT = re.compile(r"(?:[!?;。！？；\n]|\.(?!\d)|(?<!\d)\.)+|,\s*(?=(?:and\s+|but\s+)?i\b)|\s+(?:and|but)\s+(?=i\b)|[，]",
                    re.I)
_NAME_ALONE = lexicon.compile(r"^(?!(?i:<@offline.not_a_name:en>)$)[A-Z][\w'’-]+$")


_GREETING_ONLY = lexicon.compile(r"^<@offline.greeting>$", re.I)
# a lead-in before the statement: "Big news: I moved to Lisbon", "So I quit Acme", "好消息：我搬到了上海",
# "实は、東京に引っ越しました"; the statement is read from the first-person word (or separator) on
_LEAD_IN_EN = re.compile(r"^(?:[^:;—]{1,40}?[:—]\s*|(?:\w+[\s,]+){1,4}?(?=(?:i|we|my)\b))", re.I)
_LEAD_IN_CJK = re.compile(r"^[^：:、，]{1,12}?[：:、，]\s*|^[^我私]{1,6}?(?=我|私は)")
_ZH_AND = lexicon.compile(r"<@offline.and:zh>")
_JA_AND = lexicon.compile(r"<@offline.and:ja>")
_EN_AND = lexicon.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+<@offline.and:en>\s+", re.I)


def split_clauses(text: str) -> list[str]:
    """Sentences and first-person clauses of a message, stripped, empty ones dropped; a greeting alone
    ("Hi!", "你好", "はじめまして") stays with the clause after it ("Hi, I'm Sam")."""
    subject = re.match(r"^\s*(i|we)\b", text or "", re.I)
    text = _ELIDED_I.sub(f". {subject.group(1)} ", text) if subject else (text or "")
    clauses = [c.strip(" \t\"'“”‘’") for c in _SPLIT.split(text) if c and c.strip(" \t\"'“”‘’")]
    out: list[str] = []
    for clause in clauses:
        if out and _GREETING_ONLY.match(out[-1]):
            out[-1] = f"{out[-1]}, {clause}"
        elif out and _NAME_ALONE.match(out[-1]) and f"{out[-1]} and {clause}" in text:
            out[-1] = f"{out[-1]} and {clause}"  # "Tom and I got engaged": one clause, the user and Tom
        else:
            out.append(clause)
    return out


# a statement opening on its verb, as chat messages do ("Just moved to Leeds!", "Got a job at Acme")
_NO_SUBJECT = lexicon.compile(rf"^(?:<@offline.news_adverb:en>\s+)?(?:<@offline.statement_verb:en>|{_GOT_A_JOB})\b",
                              re.I)
_NOT_A_POSITION = lexicon.compile(r"(?:a|an)\s+(?:big\s+|huge\s+)?<@offline.not_a_position:en>\b", re.I)
VERB_BEFORE_THING = lexicon.words("offline.verb_before_thing", "zh")  # 喝 of 喝咖啡
_AS_ROLE = re.compile(r"^(?P<v>.+?)\s+as\s+(?P<r>(?:a|an|the|its|their)\s+.+|[a-z][\w -]+)$", re.I)


def _match(clause: str, lang: str) -> Statement | None:
    for attribute, verb, polarity, pattern in _PATTERNS[lang]:
        m = pattern.match(clause)
        if not m:
            continue
        value = m.group("v").strip().strip("\"'“”")
        if lang == "en":
            value = re.sub(r"^(?:to|at|in)\s+", "", value) if attribute != "like" else value
            value = _EN_TAIL_TIME.sub("", value)
            if attribute == "home":  # "I moved to Toronto from Osaka": Toronto; Osaka is where they came from
                value = re.sub(r"\s+from\s+.*$", "", value)
            # "I quit smoking" / "I left the party" / "I joined a chess club" are not jobs: an employer is named
            # (capitalised: "Acme", "a startup called Fernwood")
            if verb == "leave" and not value[:1].isupper():
                continue
            if verb == "join" and not re.search(r"(?:^|\s)[A-Z]", value):
                continue
            if verb == "title" and _NOT_A_POSITION.match(m.group("r")):
                continue
            if verb == "intro" and re.search(r"(?:ese|ish)$", value):  # "I'm Japanese": not a name
                continue
            if verb == "intro" and value.islower():  # "hey im zoe": a name, unless it says how they are
                if value in _NOT_NAMES or re.search(r"(?:ed|ing|y|ly|ful)$", value):
                    continue
                value = value.capitalize()
        if not value or len(value) > 80:
            continue
        if lang == "ja" and ("は" in value or value.startswith("私の")):
            continue  # "私の弟はベルリンで働いています": someone else's job, not a place of the user's
        role = ""
        if attribute == "work" and lang == "en":
            role = m.group("r").strip() if verb == "title" else ""
            held = _AS_ROLE.match(value)  # "Fernwood as a staff engineer"
            if held:
                value, role = held.group("v").strip(), held.group("r").strip()
        person = "third" if _THIRD_PERSON.match(clause) else "first"
        return Statement(attribute=attribute, value=value, polarity=polarity, lang=lang,
                         verb="move" if verb == "move" else "", person=person, role=role)
    return None


def parse_statement(clause: str) -> Statement | None:
    """Parse one clause ("I live in Berlin", "用户住在北京") into a Statement, or None if not covered. A short
    lead-in before the statement ("Big news: ...", "So ...", "好消息：...", "実は、...") is skipped."""
    return _parse(clause, before_comma=True)


def reads_whole(clause: str) -> bool:
    """The clause's statement is read from all of it, not only from what comes before a comma ("I'm Grace, a
    physiotherapist": the name is read, and the rest is more than a remark the statement holds)."""
    return _parse(clause, before_comma=False) is not None


def _parse(clause: str, before_comma: bool) -> Statement | None:
    clause = unicodedata.normalize("NFKC", clause or "").replace("’", "'").strip().rstrip(".!?。！？")
    if not clause:
        return None
    lang = detect_language(clause)
    st = _match(clause, lang)
    if st is None:
        lead = (_LEAD_IN_EN if lang == "en" else _LEAD_IN_CJK).match(clause)
        if lead and lead.end() < len(clause):
            st = _match(clause[lead.end():].strip(), lang)
    if st is None and lang == "en" and _NO_SUBJECT.match(clause):
        st = _match(f"I {clause}", lang)  # "Finally moved into the Galway house": a chat leaves out the "I"
    if st is None and before_comma and lang == "en" and "," in clause:
        st = _parse(clause.split(",", 1)[0], True)  # a remark after the statement: "..., it's lovely"
    return st


def parse_clause(clause: str) -> list[Statement]:
    """The statements of one clause: a like (or its retraction) of several things is one statement per thing
    ("I like jazz and hiking", "我喜欢喝咖啡和茶", "私は寿司とラーメンが好きです")."""
    st = parse_statement(clause)
    if st is None:
        return []
    if st.attribute != "like":
        return [st]
    value = st.value
    if st.lang == "en" and "," in value and not re.search(r",[^,]+\s(?:and|or)\s", value):
        value = value.split(",", 1)[0]  # "tango, to be honest": a remark after the thing, not a list
        st = replace(st, value=value.strip())
    splitter = {"en": _EN_AND, "zh": _ZH_AND, "ja": _JA_AND}[st.lang]
    parts = [p.strip() for p in splitter.split(st.value) if p and p.strip()]
    if len(parts) < 2:
        return [st]
    if st.lang == "zh" and parts[0][0] in VERB_BEFORE_THING:  # "喝咖啡和茶": the verb goes with each thing
        parts = [parts[0]] + [p if p[0] == parts[0][0] else parts[0][0] + p for p in parts[1:]]
    return [replace(st, value=p) for p in parts]


def parse_statements(text: str) -> list[Statement]:
    """All covered statements in a message, in order."""
    return [st for clause in split_clauses(text) for st in parse_clause(clause)]


def fact_text(st: Statement) -> str:
    """The canonical memory text of a statement, in its language."""
    v = st.value
    if st.lang == "zh":
        if st.attribute == "name":
            return f"用户叫{v}"
        if st.attribute == "home":
            return f"用户现在住在{v}" if st.verb == "move" else f"用户住在{v}"
        if st.attribute == "work":
            return f"用户在{v}工作" if st.polarity else f"用户不再在{v}工作"
        return f"用户喜欢{v}" if st.polarity else f"用户不再喜欢{v}"
    if st.lang == "ja":
        if st.attribute == "name":
            return f"ユーザーの名前は{v}"
        if st.attribute == "home":
            return f"ユーザーは今{v}に住んでいる" if st.verb == "move" else f"ユーザーは{v}に住んでいる"
        if st.attribute == "work":
            return f"ユーザーは{v}で働いている" if st.polarity else f"ユーザーはもう{v}で働いていない"
        return f"ユーザーは{v}が好き" if st.polarity else f"ユーザーはもう{v}が好きではない"
    if st.attribute == "name":
        return f"User's name is {v}"
    if st.attribute == "home":
        return f"User now lives in {v}" if st.verb == "move" else f"User lives in {v}"
    if st.attribute == "work":
        if not st.polarity:
            return f"User no longer works at {v}"
        return f"User works at {v} as {st.role}" if st.role else f"User works at {v}"
    return f"User likes {v}" if st.polarity else f"User no longer likes {v}"


def fact_category(st: Statement) -> tuple[str, float, str]:
    """(category, importance, memory_type) of a statement's fact."""
    if st.attribute == "like":
        return ("preference", 0.6, "preference")
    if st.attribute == "name":
        return ("fact", 0.9, "semantic")
    return ("fact", 0.8, "semantic")


# ---- group chats -------------------------------------------------------------------------------
_EN_MY = re.compile(r"\bmy\b", re.I)
_EN_I = re.compile(r"^(?:i|I)\b")


def about_speaker(text: str, name: str) -> str:
    """A user fact rewritten about a named group-chat speaker: "User now lives in Boston" -> "Caroline now
    lives in Boston", "User's favorite food is pizza" -> "Caroline's ...", "用户喜欢打篮球" -> "小李喜欢打篮球",
    "ユーザーは東京に住んでいる" -> "田中は東京に住んでいる"; a leftover "my" becomes "<name>'s"."""
    name = name.strip()
    if not name:
        return text
    if text.startswith("User's "):
        text = f"{name}'s {text[len('User'):].lstrip(chr(39)).removeprefix('s ')}"
    elif re.match(r"^User\b", text):
        text = name + text[len("User"):]
    elif text.startswith("用户"):
        return name + text[len("用户"):]
    elif text.startswith("ユーザー"):
        return name + text[len("ユーザー"):]
    elif _EN_I.match(text):
        text = _EN_I.sub(name, text, count=1)
    return _EN_MY.sub(f"{name}'s", text)
