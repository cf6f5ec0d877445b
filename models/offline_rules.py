"""Rule parser of first-person statements, shared by the offline chat model and its graph half.

The offline model (memoryx.models.offline) is a demo and test model: it understands a small, documented
set of statements and nothing else. This module is that set. Each statement is parsed into a `Statement`
(attribute, value, polarity, language); `fact_text` renders the canonical memory text for it, and the same
parser reads those canonical texts back, so existing memories can be compared with new facts.

Covered statements (first person, and the canonical third-person form the offline model stores):

=========== =============================== ======================== ============================
attribute   English                         Chinese                  Japanese
=========== =============================== ======================== ============================
name        My name is X / I am called X /  我叫X / 我的名字是X /    私の名前はXです /
            Call me X                       我名叫X                  私はXと申します
home        I live in X / I'm living in X   我住在X / 我现在住在X    私はXに住んでいます
move        I moved to X / I just moved     我搬到了X / 我搬到X /    私はXに引っ越しました
            to X / I have moved to X        我搬去了X
work        I work at X / I work for X /    我在X工作 / 我在X上班    私はXで働いています
            I'm working at X
like        I like X / I love X / I enjoy X 我喜欢X / 我很喜欢X      私はXが好きです
retraction  I don't like X anymore /        我不再喜欢X /            私はもうXが好きではありません /
            I no longer like X /            我不喜欢X了              Xが好きではなくなりました
            I don't like X
=========== =============================== ======================== ============================

Canonical fact texts: "User's name is X", "User lives in X", "User now lives in X" (a move), "User works
at X", "User likes X", "User no longer likes X" / "用户叫X", "用户住在X", "用户现在住在X", "用户在X工作",
"用户喜欢X", "用户不再喜欢X" / "ユーザーの名前はX", "ユーザーはXに住んでいる", "ユーザーは今Xに住んでいる",
"ユーザーはXで働いている", "ユーザーはXが好き", "ユーザーはもうXが好きではない". A move is stored as the new
home ("now lives in"), so it shares words with the old home memory and retrieval finds the memory to update.

Single-valued attributes are name, home (a move sets home) and work: a new value UPDATEs the old memory.
A retraction DELETEs the matching like (and is itself kept as a fact). Anything else is not understood by
these rules.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

SINGLE_VALUED = frozenset({"name", "home", "work"})

# relation names used by the offline graph extraction: timeless, consistent, in the statement's language
RELATION_NAMES = {
    "name": {"en": "is_named", "zh": "名叫", "ja": "名前"},
    "home": {"en": "lives_in", "zh": "住在", "ja": "住んでいる"},
    "work": {"en": "works_at", "zh": "工作于", "ja": "働いている"},
    "like": {"en": "likes", "zh": "喜欢", "ja": "好き"},
}
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

    @property
    def single_valued(self) -> bool:
        return self.attribute in SINGLE_VALUED

    @property
    def key(self) -> tuple[str, str]:
        return (self.attribute, normalize_value(self.value))

    def relation(self) -> str:
        return RELATION_NAMES[self.attribute][self.lang]


# ------------------------------------------------------------------------------------------- language


_CJK = re.compile(r"[\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")


def detect_language(text: str) -> str:
    """'ja' when kana are present, 'zh' for other CJK text, else 'en'."""
    if _KANA.search(text or ""):
        return "ja"
    if _CJK.search(text or ""):
        return "zh"
    return "en"


def normalize_value(value: str) -> str:
    v = unicodedata.normalize("NFKC", value or "").strip().lower()
    v = re.sub(r"^(?:the|a|an)\s+", "", v)
    return re.sub(r"\s+", " ", v)


# ------------------------------------------------------------------------------------------- patterns

_EN_VALUE = r"(?P<v>[^,.;!?]+?)"
_EN_END = r"(?:\s+(?:anymore|any more|now|too|either|very much|a lot|these days|nowadays))*\s*$"
_ADV = r"(?:(?:really|also|just|recently|currently|now|still|actually)\s+)*"

_EN_PATTERNS: list[tuple[str, str, bool, re.Pattern]] = [
    # (attribute, verb, polarity, pattern) -- retractions first, they contain the like verbs
    ("like", "", False, re.compile(rf"^(?:but\s+|and\s+)?i\s+{_ADV}(?:don't|do not|dont|no longer|don’t)\s+{_ADV}(?:like|love|enjoy)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("like", "", False, re.compile(rf"^(?:user|the user)\s+(?:no longer|doesn't|does not)\s+(?:likes?|loves?|enjoys?)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("name", "", True, re.compile(rf"^(?:hi|hello|hey)?[\s,!]*(?:my name is|my name's|i am called|i'm called|call me)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("name", "", True, re.compile(rf"^(?:user's name is|the user's name is|name is)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "move", True, re.compile(rf"^(?:but\s+|and\s+)?i\s+{_ADV}(?:have\s+|'ve\s+)?{_ADV}(?:moved|relocated)\s+to\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "move", True, re.compile(rf"^(?:user|the user)\s+(?:has\s+)?(?:moved|relocated)\s+to\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "", True, re.compile(rf"^(?:but\s+|and\s+)?(?:i\s+{_ADV}live|i'm\s+{_ADV}living|i am\s+{_ADV}living)\s+in\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("home", "", True, re.compile(rf"^(?:user|the user)\s+(?:now\s+|currently\s+)?lives\s+in\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("work", "", True, re.compile(rf"^(?:but\s+|and\s+)?(?:i\s+{_ADV}work|i'm\s+{_ADV}working|i am\s+{_ADV}working)\s+(?:at|for)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("work", "", True, re.compile(rf"^(?:user|the user)\s+works\s+(?:at|for)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("like", "", True, re.compile(rf"^(?:but\s+|and\s+)?i\s+{_ADV}(?:like|love|enjoy)\s+{_EN_VALUE}{_EN_END}", re.I)),
    ("like", "", True, re.compile(rf"^(?:user|the user)\s+(?:likes|loves|enjoys)\s+{_EN_VALUE}{_EN_END}", re.I)),
]

_ZH_VALUE = r"(?P<v>[^，。！？；,.!?;\s]+?)"
_ZH_ADV = r"(?:现在|目前|最近|刚|刚刚|已经|也|还|很|非常|特别|真的)*"
_ZH_END = r"(?:了|啦|呢|啊|的)?$"
_ZH_PATTERNS: list[tuple[str, str, bool, re.Pattern]] = [
    ("like", "", False, re.compile(rf"^(?:但是|可是|不过)?(?:我|用户){_ZH_ADV}(?:不再|不)喜欢{_ZH_VALUE}{_ZH_END}")),
    ("name", "", True, re.compile(rf"^(?:你好|您好)?[，,！!]?(?:我|用户)(?:的名字是|名叫|叫做|叫){_ZH_VALUE}{_ZH_END}")),
    ("home", "move", True, re.compile(rf"^(?:但是|可是|不过)?(?:我|用户){_ZH_ADV}搬(?:到了|到|去了|去){_ZH_VALUE}{_ZH_END}")),
    ("home", "", True, re.compile(rf"^(?:但是|可是|不过)?(?:我|用户){_ZH_ADV}住在{_ZH_VALUE}{_ZH_END}")),
    ("work", "", True, re.compile(r"^(?:但是|可是|不过)?(?:我|用户)" + _ZH_ADV + r"在(?P<v>[^，。！？；,.!?;\s]+?)(?:工作|上班)" + _ZH_END)),
    ("like", "", True, re.compile(rf"^(?:但是|可是|不过)?(?:我|用户){_ZH_ADV}喜欢{_ZH_VALUE}{_ZH_END}")),
]

_JA_VALUE = r"(?P<v>[^、。！？，,.!?\s]+?)"
_JA_PATTERNS: list[tuple[str, str, bool, re.Pattern]] = [
    ("like", "", False, re.compile(rf"^(?:私は|ユーザーは)?もう{_JA_VALUE}が好きでは(?:ありません|ない)$")),
    ("like", "", False, re.compile(rf"^(?:私は|ユーザーは)?{_JA_VALUE}が好きでは(?:なくなりました|なくなった)$")),
    ("name", "", True, re.compile(rf"^(?:私|ユーザー)の名前は{_JA_VALUE}(?:です)?$")),
    ("name", "", True, re.compile(rf"^私は{_JA_VALUE}(?:と申します|といいます|と言います)$")),
    ("home", "move", True, re.compile(rf"^(?:私は|ユーザーは)?{_JA_VALUE}に引っ越し(?:ました|た)$")),
    ("home", "", True, re.compile(rf"^(?:私は|ユーザーは)?(?:今|現在)?{_JA_VALUE}に住んでい(?:ます|る)$")),
    ("work", "", True, re.compile(rf"^(?:私は|ユーザーは)?{_JA_VALUE}で働いてい(?:ます|る)$")),
    ("like", "", True, re.compile(rf"^(?:私は|ユーザーは)?{_JA_VALUE}が(?:大)?好き(?:です)?$")),
]

_PATTERNS = {"en": _EN_PATTERNS, "zh": _ZH_PATTERNS, "ja": _JA_PATTERNS}
_THIRD_PERSON = re.compile(r"^(?:the\s+)?user\b|^name is|^用户|^ユーザー", re.I)

# clause splitting: sentence punctuation; English ", I" / " and I" / " but I"; Chinese commas
_SPLIT = re.compile(r"[.!?;。！？；\n]+|,\s*(?=(?:and\s+|but\s+)?i\b)|\s+(?:and|but)\s+(?=i\b)|[，]", re.I)


def split_clauses(text: str) -> list[str]:
    """Sentences and first-person clauses of a message, stripped, empty ones dropped."""
    return [c.strip(" \t\"'“”‘’") for c in _SPLIT.split(text or "") if c and c.strip(" \t\"'“”‘’")]


def parse_statement(clause: str) -> Statement | None:
    """Parse one clause ("I live in Berlin", "用户住在北京") into a Statement, or None if not covered."""
    clause = unicodedata.normalize("NFKC", clause or "").strip().rstrip(".!?。！？")
    if not clause:
        return None
    lang = detect_language(clause)
    for attribute, verb, polarity, pattern in _PATTERNS[lang]:
        m = pattern.match(clause)
        if not m:
            continue
        value = m.group("v").strip().strip("\"'“”")
        if lang == "en":
            value = re.sub(r"^(?:to|at|in)\s+", "", value) if attribute != "like" else value
        if not value or len(value) > 80:
            continue
        person = "third" if _THIRD_PERSON.match(clause) else "first"
        return Statement(attribute=attribute, value=value, polarity=polarity, lang=lang, verb=verb, person=person)
    return None


def parse_statements(text: str) -> list[Statement]:
    """All covered statements in a message, in order."""
    out = []
    for clause in split_clauses(text):
        st = parse_statement(clause)
        if st is not None:
            out.append(st)
    return out


def fact_text(st: Statement) -> str:
    """The canonical memory text of a statement, in its language."""
    v = st.value
    if st.lang == "zh":
        if st.attribute == "name":
            return f"用户叫{v}"
        if st.attribute == "home":
            return f"用户现在住在{v}" if st.verb == "move" else f"用户住在{v}"
        if st.attribute == "work":
            return f"用户在{v}工作"
        return f"用户喜欢{v}" if st.polarity else f"用户不再喜欢{v}"
    if st.lang == "ja":
        if st.attribute == "name":
            return f"ユーザーの名前は{v}"
        if st.attribute == "home":
            return f"ユーザーは今{v}に住んでいる" if st.verb == "move" else f"ユーザーは{v}に住んでいる"
        if st.attribute == "work":
            return f"ユーザーは{v}で働いている"
        return f"ユーザーは{v}が好き" if st.polarity else f"ユーザーはもう{v}が好きではない"
    if st.attribute == "name":
        return f"User's name is {v}"
    if st.attribute == "home":
        return f"User now lives in {v}" if st.verb == "move" else f"User lives in {v}"
    if st.attribute == "work":
        return f"User works at {v}"
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
