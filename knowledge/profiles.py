"""User and group profiles: what the memories say about who someone is.

A user profile holds name and aliases, home, work, relationships, preferences and dislikes, goals; each value
with the memory ids it came from and when it changed. It is kept by the add graph's `update_profile` node
from the memories an add run wrote (`profile_changes`: rules over the fact text, English / Chinese /
Japanese, covering the canonical statements of the offline model and the usual third-person fact styles of
real models: "User lives in X", "Lives in X", "用户住在X", "ユーザーはXに住んでいる"), optionally completed by a
model call for free text (MEMORYX_PROFILE_MODEL, prompts/profile.py). Rows live in SQL (`profile_values`,
stores/sql/profiles.py); `build_profile` turns them into the dict `Memory.get_profile` returns.

A group profile (subject "group:<id>") holds the group's members (rows kept by update_profile), and its roles
and recurring topics, read from the group's memories when asked (`group_insights`, see "group profile" below):
each with the memory ids it came from, since (when it started) and changed_at (when it last changed or came
back).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

from memoryx.core.text import STOP_WORDS, _stem
from memoryx.models.offline_answers import answers_task

SINGLE_VALUED = ("name", "home", "work")
USER_FIELDS = ("name", "aliases", "home", "work", "relationships", "preferences", "dislikes", "goals")
GROUP_FIELDS = ("members", "roles", "topics")
# row field -> profile key (list-valued fields are plural in the profile dict)
PLURAL = {"alias": "aliases", "relationship": "relationships", "preference": "preferences", "dislike": "dislikes",
          "goal": "goals", "member": "members", "role": "roles", "topic": "topics"}
ROW_FIELDS = frozenset(SINGLE_VALUED) | frozenset(PLURAL)

# what the user is called in canonical fact texts, per language (query analysis maps the user's names to it)
SELF_WORD = {"en": "User", "zh": "用户", "ja": "ユーザー"}


def user_subject(user_id: str) -> str:
    return f"user:{user_id}"


def group_subject(group_id: str) -> str:
    return f"group:{group_id}"


def value_key(value: str) -> str:
    v = unicodedata.normalize("NFKC", value or "").strip().lower()
    v = re.sub(r"^(?:the|a|an)\s+", "", v)
    return re.sub(r"\s+", " ", v).strip(" .,!?;:。！？，")


@dataclass(frozen=True)
class ProfileChange:
    op: str  # set | add | end
    field: str
    value: str

    def as_row(self, memory_id: str | None, source: str = "rule") -> dict:
        return {"op": self.op, "field": self.field, "value": self.value, "key": value_key(self.value),
                "memory_id": memory_id, "source": source}


# ------------------------------------------------------------------------------------------------ rules

_V = r"(?P<v>[^,.;!?]+?)"
_END = r"\s*[.!]?$"
_SUBJ = r"^(?i:(?:the\s+)?user(?:'s|’s)?)\s+"
_REL = (r"(?i:(?P<r>wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|mother|mom|father|dad|sister|brother|son|"
        r"daughter|friend|best friend|boss|colleague|coworker|roommate|cousin|aunt|uncle|grandmother|grandfather|"
        r"dog|cat|pet))")
_GOAL = r"(?:wants to|plans to|is planning to|hopes to|would like to|intends to|aims to|is going to|wishes to)"

# (op, field, pattern); first match wins per fact. Third person ("User ...") and the subjectless mem0 style.
_EN: list[tuple[str, str, re.Pattern]] = [
    ("end", "preference", re.compile(rf"^(?:the\s+)?(?:user\s+)?(?:no longer|doesn't|does not|don't)\s+(?:likes?|loves?|enjoys?)\s+{_V}(?:\s+anymore)?{_END}", re.I)),
    ("set", "name", re.compile(rf"^(?:(?:the\s+)?user(?:'s|’s)\s+)?name is\s+{_V}{_END}", re.I)),
    ("set", "name", re.compile(rf"^(?:the\s+)?user is (?:called|named)\s+{_V}{_END}", re.I)),
    ("add", "alias", re.compile(rf"^(?:(?:the\s+)?user\s+)?(?:goes by|is also (?:called|known as)|is nicknamed)\s+{_V}{_END}", re.I)),
    ("add", "alias", re.compile(rf"^(?:(?:the\s+)?user(?:'s|’s)\s+)?nickname is\s+{_V}{_END}", re.I)),
    ("set", "home", re.compile(rf"^(?:(?:the\s+)?user\s+)?(?:now\s+|currently\s+)?(?:lives|is living|resides)\s+in\s+{_V}{_END}", re.I)),
    ("set", "home", re.compile(rf"^(?:(?:the\s+)?user\s+)?(?:has\s+)?(?:just\s+)?(?:moved|relocated)\s+to\s+{_V}{_END}", re.I)),
    ("set", "work", re.compile(rf"^(?:(?:the\s+)?user\s+)?(?:now\s+|currently\s+)?works\s+(?:at|for)\s+{_V}{_END}", re.I)),
    ("add", "relationship", re.compile(rf"{_SUBJ}{_REL}(?i:'s name)?\s+is\s+(?i:called\s+|named\s+)?(?P<v>[A-Z][^,.;!?]*?){_END}")),
    ("add", "relationship", re.compile(rf"^(?:(?:the\s+)?user\s+)?has an?\s+{_REL}\s+(?:named|called)\s+{_V}{_END}", re.I)),
    ("add", "dislike", re.compile(rf"^(?:(?:the\s+)?user\s+)?(?:dislikes|hates|can't stand|cannot stand)\s+{_V}{_END}", re.I)),
    ("add", "preference", re.compile(rf"^(?:(?:the\s+)?user\s+)?(?:likes|loves|enjoys|prefers)\s+{_V}{_END}", re.I)),
    ("add", "preference", re.compile(rf"{_SUBJ}favou?rite\s+(?P<r>[\w\s]+?)\s+is\s+{_V}{_END}", re.I)),
    ("add", "goal", re.compile(rf"^(?:(?:the\s+)?user\s+)?{_GOAL}\s+(?P<v>[^.;!?]+?){_END}", re.I)),
    ("add", "goal", re.compile(rf"{_SUBJ}goal is(?: to)?\s+(?P<v>[^.;!?]+?){_END}", re.I)),
]

_ZV = r"(?P<v>[^，。！？；,.!?;\s]+?)"
_ZEND = r"(?:了|啦|呢|啊)?[。！]?$"
_ZADV = r"(?:现在|目前|最近|刚|刚刚|已经|也|还|很|非常|特别|真的)*"
_ZREL = r"(?P<r>妻子|老婆|丈夫|老公|女朋友|男朋友|妈妈|母亲|爸爸|父亲|姐姐|妹妹|哥哥|弟弟|儿子|女儿|朋友|老板|同事|室友|狗|猫)"
_ZH: list[tuple[str, str, re.Pattern]] = [
    ("end", "preference", re.compile(rf"^用户{_ZADV}不再喜欢{_ZV}{_ZEND}")),
    ("add", "dislike", re.compile(rf"^用户{_ZADV}(?:不喜欢|讨厌){_ZV}{_ZEND}")),
    ("set", "name", re.compile(rf"^用户(?:的名字是|名叫|叫做|叫){_ZV}{_ZEND}")),
    ("add", "alias", re.compile(rf"^用户(?:的)?(?:昵称|小名|外号)(?:是|叫){_ZV}{_ZEND}")),
    ("set", "home", re.compile(rf"^用户{_ZADV}(?:住在|搬到了|搬到|搬去了|搬去){_ZV}{_ZEND}")),
    ("set", "work", re.compile(rf"^用户{_ZADV}在(?P<v>[^，。！？；,.!?;\s]+?)(?:工作|上班){_ZEND}")),
    ("add", "relationship", re.compile(rf"^用户的{_ZREL}(?:叫|是|名叫){_ZV}{_ZEND}")),
    ("add", "preference", re.compile(rf"^用户{_ZADV}(?:喜欢|爱){_ZV}{_ZEND}")),
    ("add", "goal", re.compile(rf"^用户{_ZADV}(?:想要|想|打算|计划|希望)(?P<v>[^。！？；!?;]+?){_ZEND}")),
]

_JV = r"(?P<v>[^、。！？，,.!?\s]+?)"
_JA: list[tuple[str, str, re.Pattern]] = [
    ("end", "preference", re.compile(rf"^ユーザーは(?:もう)?{_JV}が好きでは(?:ない|ありません|なくなった)$")),
    ("add", "dislike", re.compile(rf"^ユーザーは{_JV}が嫌い(?:です)?$")),
    ("set", "name", re.compile(rf"^ユーザーの名前は{_JV}(?:です)?$")),
    ("set", "home", re.compile(rf"^ユーザーは(?:今|現在)?{_JV}に(?:住んでいる|住んでいます|引っ越した)$")),
    ("set", "work", re.compile(rf"^ユーザーは{_JV}で働いて(?:いる|います)$")),
    ("add", "preference", re.compile(rf"^ユーザーは{_JV}が(?:大)?好き(?:です)?$")),
]

_KANA = re.compile(r"[\u3040-\u30ff]")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def language_of(text: str) -> str:
    if _KANA.search(text or ""):
        return "ja"
    return "zh" if _CJK.search(text or "") else "en"


def profile_changes(fact_text: str) -> list[ProfileChange]:
    """The profile changes one fact implies (empty when no rule covers it)."""
    text = unicodedata.normalize("NFKC", fact_text or "").strip()
    lang = language_of(text)
    patterns = {"en": _EN, "zh": _ZH, "ja": _JA}[lang]
    if lang != "en":
        text = text.rstrip("。！!.")
    for op, field, pattern in patterns:
        m = pattern.match(text)
        if not m:
            continue
        value = m.group("v").strip().strip("\"'“”")
        if not value or len(value) > 120:
            return []
        groups = m.groupdict()
        if field == "relationship":
            value = f"{groups['r'].lower()}: {value}"
        elif field == "preference" and groups.get("r"):
            value = f"{value} (favourite {groups['r'].strip()})"
        if field == "dislike":  # disliking something ends liking it
            return [ProfileChange("end", "preference", value), ProfileChange("add", "dislike", value)]
        if field == "preference" and op == "add":  # liking it again ends the dislike
            return [ProfileChange("end", "dislike", value), ProfileChange("add", "preference", value)]
        return [ProfileChange(op, field, value)]
    return []


# ------------------------------------------------------------------------------------------------ reading


def build_profile(subject: str, rows: list[dict], live_ids: set[str] | None = None, *,
                  include_history: bool = False) -> dict:
    """The profile dict of a subject from its rows: {"user_id"|"group_id", fields..., "sources", "updated_at"}.

    A value counts only while a live memory backs it (`live_ids`; None: no check): a memory deleted by
    any path (API, rollback, consolidation) drops the value it gave. Each value is returned as
    {"value", "memory_ids", "since", "changed_at"}; single-valued fields hold one such dict or None.
    """
    kind, _, ident = subject.partition(":")
    fields = USER_FIELDS if kind == "user" else GROUP_FIELDS
    out: dict = {f"{kind}_id": ident, **{f: (None if f in SINGLE_VALUED else []) for f in fields}}
    history: list[dict] = []
    updated = None
    for row in rows:
        ids = [i for i in row["memory_ids"] if live_ids is None or i in live_ids]
        entry = {"value": row["value"], "memory_ids": ids, "since": row["first_seen_at"], "changed_at": row["changed_at"]}
        updated = max(filter(None, [updated, row["changed_at"]]), default=None)
        if row["ended_at"] or (live_ids is not None and row["memory_ids"] and not ids):
            history.append({**entry, "field": row["field"], "ended_at": row["ended_at"]})
            continue
        key = PLURAL.get(row["field"], row["field"])
        if key not in out:
            continue
        if row["field"] in SINGLE_VALUED:
            if out[key] is None or (row["changed_at"] or "") >= (out[key]["changed_at"] or ""):
                out[key] = entry
        else:
            out[key].append(entry)
    out["updated_at"] = updated
    if include_history:
        out["history"] = history
    return out


def self_names(profile: dict) -> list[str]:
    """The names the user goes by (current name and aliases), longest first (matched in that order)."""
    names = [profile["name"]["value"]] if profile.get("name") else []
    names += [a["value"] for a in profile.get("aliases") or []]
    return sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True)


def profile_lines(profile: dict) -> list[str]:
    """The profile as short lines for a prompt block (get_context)."""
    label = {"name": "Name", "aliases": "Also called", "home": "Lives in", "work": "Works at",
             "relationships": "Relationships", "preferences": "Likes", "dislikes": "Dislikes", "goals": "Goals",
             "members": "Members", "roles": "Roles", "topics": "Recurring topics"}
    lines = []
    for key, title in label.items():
        value = profile.get(key)
        if isinstance(value, dict):
            lines.append(f"- {title}: {value['value']}")
        elif value:
            lines.append(f"- {title}: " + "; ".join(v["value"] for v in value))
    return lines


# ------------------------------------------------------------------------------------------------ group profile

# Roles and recurring topics of a group are read from the group's live memories when the profile is asked for
# (not kept as rows): "recurring" is a property of the whole history (a topic that comes back on other days),
# and reading it from the memories keeps it exact after any deletion, rollback or purge. Rules only:
# - stated roles: "I'm the team lead" (a raw turn, its speaker), "Caroline is the organiser" (a fact),
#   "我是组长", "小李是队长", "私はリーダーです"; a later "... is no longer the ..." ends it;
# - roles from activity: who organises (proposals: "let's", "shall we", "我们…吧", "集合", "しましょう"), who asks
#   (questions), who answers (a turn right after another participant's question); a participant holds one
#   when they did it at least ACTIVITY_MIN times and most in the group;
# - recurring topics: content words (English, stop words and names out) and CJK words (Han bigrams without
#   function characters, katakana words) that come back on at least TOPIC_MIN_DAYS distinct days.
GROUP_PROFILE_MEMORIES = 2000  # newest memories read (a long-lived group: its recent history)
ACTIVITY_MIN = 2
TOPIC_MIN_DAYS = 2
MAX_TOPICS = 10
MAX_EVIDENCE = 20

_ROLE_WORDS = (r"(?:(?:team|group|project|tech(?:nical)?|club|trip|study)\s+)?(?:lead|leader|organi[sz]er|manager|captain|host|"
               r"admin(?:istrator)?|coordinator|moderator|chair(?:person)?|secretary|treasurer|coach|owner|founder|"
               r"president|scrum master|product owner)")
_EN_ROLE = re.compile(rf"^(?:(?P<self>i'm|i am|user is)|(?P<who>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)\s+is)\s+(?P<neg>no longer\s+)?"
                      rf"(?:now\s+)?(?:the|our|a|an)\s+(?P<role>{_ROLE_WORDS})\b", re.I)
_ZH_ROLE = re.compile(r"^(?:(?P<self>我|用户)|(?P<who>[^\s，。是]{1,8}?))(?P<neg>不再)?(?:现在)?是(?:我们的?|这个群的|本群的|大家的)?"
                      r"(?P<role>组长|队长|班长|群主|管理员|负责人|主持人|领队|组织者|秘书|会长|老板|经理|教练)")
_JA_ROLE = re.compile(r"^(?:(?P<self>私|ユーザー)|(?P<who>[^\s、。は]{1,10}?))は(?:この|うちの)?(?:チームの|グループの)?"
                      r"(?P<role>リーダー|マネージャー|幹事|キャプテン|管理者|部長|課長|主催者|司会)(?P<neg>ではない|じゃない)?")
_ORGANISE = re.compile(r"\b(?:let's|lets|shall we|how about we|we should|who's in|who is in|i'll organi[sz]e|i'm organi[sz]ing|"
                       r"i will organi[sz]e|i booked|i've booked|reminder|agenda|meet(?:ing)? (?:at|on)|see you all)\b|"
                       r"(?:我们|大家|一起).{0,12}(?:吧|好吗)|集合|开会|安排一下|我来组织|提醒大家|しましょう|しよう|集合|会議|予定を", re.I)
_QUESTION = re.compile(r"[?？]\s*$|(?:吗|呢)[。]?$|(?:ですか|ますか|か)[。]?$")
_TIME_WORDS = frozenset("今天 昨天 明天 后天 前天 今年 去年 明年 上周 下周 本周 周末 上个 下个 这个 那个 今日 昨日 明日 来週 先週 今週 "
                        "週末 今年 去年 来年 一起 我们 大家 时候 什么 怎么 没有 可以 知道 觉得 真的 现在 已经 还是 因为 所以 但是 "
                        "如果 这样 那样 一下 一个 用户".split())
_EN_EXTRA_STOP = frozenset("""user like likes liked love loves loved really think thought know knew want wanted going go
    went get got make made take took see saw say said tell told good great nice well yes yeah okay thank thanks
    today yesterday tomorrow week weekend month year last next time day days now still much many lot lots some any
    all every one two three new old always never sometime something anything thing things way back out up down
    come came let's lets would could should hey hi hello sure right maybe also been being doing did done""".split())
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")
_KATAKANA_WORD = re.compile(r"[\u30a0-\u30ff]{3,}")
_HAN_FUNCTION = frozenset("的了是在和与及或也就都而着过吗呢吧啊呀么之其这那个们我你他她它去来要想会说有一上下不没很还把被让给对到从")


def _when(row: dict) -> str:
    return str(row.get("valid_at") or row.get("created_at") or "")


def _speaker(row: dict) -> str:
    meta = row.get("metadata") or {}
    return str(meta.get("speaker") or row.get("user_id") or "").strip()


def stated_role(text: str) -> tuple[str | None, str, bool] | None:
    """(who or None for the speaker, role, ended) of a sentence stating a role, else None."""
    text = unicodedata.normalize("NFKC", text or "").strip()
    for pattern in (_EN_ROLE, _ZH_ROLE, _JA_ROLE):
        m = pattern.match(text)
        if m:
            who = None if m.group("self") else m.group("who")
            return who, m.group("role").lower() if pattern is _EN_ROLE else m.group("role"), bool(m.group("neg"))
    return None


def topic_words(text: str, names: set[str]) -> set[str]:
    """The content words of a memory, language-aware: English words (stop words, common verbs and the group's
    names out, light stemming), Han bigrams without function characters, katakana words."""

    text = unicodedata.normalize("NFKC", text or "")
    out: set[str] = set()
    for w in _EN_WORD.findall(text):
        low = w.lower().strip("'-")
        if low in STOP_WORDS or low in _EN_EXTRA_STOP or low in names or len(low) < 3:
            continue
        out.add(_stem(low))
    for run in _HAN_RUN.findall(text):
        for i in range(len(run) - 1):
            gram = run[i:i + 2]
            if gram[0] in _HAN_FUNCTION or gram[1] in _HAN_FUNCTION or gram in _TIME_WORDS or gram in names:
                continue
            out.add(gram)
    out.update(k for k in _KATAKANA_WORD.findall(text) if k not in names and k != "ユーザー")
    return out


def _entry(value: str, rows: list[dict], since_index: int = 0, **extra) -> dict:
    rows = sorted(rows, key=_when)
    return {"value": value, "memory_ids": [r["id"] for r in rows][-MAX_EVIDENCE:],
            "since": _when(rows[min(since_index, len(rows) - 1)]) or None, "changed_at": _when(rows[-1]) or None, **extra}


def group_roles(memories: list[dict]) -> list[dict]:
    """Roles in a group: stated ones and those read from activity (see the section comment)."""
    rows = sorted((r for r in memories if r.get("category") != "episode"), key=_when)
    stated: dict[tuple[str, str], list[dict]] = {}
    ended: set[tuple[str, str]] = set()
    acts: dict[tuple[str, str], list[dict]] = {}
    previous: dict | None = None
    for r in rows:
        who, text = _speaker(r), r.get("memory") or ""
        found = stated_role(text)
        if found:
            person = found[0] or who
            if person:
                key = (person, found[1])
                if found[2]:
                    ended.add(key)
                    stated.pop(key, None)
                else:
                    ended.discard(key)
                    stated.setdefault(key, []).append(r)
        if who:
            if _QUESTION.search(text.strip()):
                acts.setdefault((who, "asks questions"), []).append(r)
            elif previous is not None and _speaker(previous) not in ("", who) and _QUESTION.search((previous.get("memory") or "").strip()):
                acts.setdefault((who, "answers questions"), []).append(r)
            if _ORGANISE.search(text):
                acts.setdefault((who, "organiser"), []).append(r)
        previous = r
    out = [_entry(f"{who}: {role}", evidence, source="stated", participant=who, role=role)
           for (who, role), evidence in stated.items()]
    for kind in ("organiser", "asks questions", "answers questions"):
        counts = {who: len(ev) for (who, k), ev in acts.items() if k == kind}
        top = max(counts.values(), default=0)
        for who, n in counts.items():
            if n >= ACTIVITY_MIN and n == top and (who, kind) not in {(e["participant"], e["role"]) for e in out}:
                out.append(_entry(f"{who}: {kind}", acts[(who, kind)], ACTIVITY_MIN - 1, source="activity",
                                  participant=who, role=kind, count=n))
    return sorted(out, key=lambda e: e["value"])


def recurring_topics(memories: list[dict]) -> list[dict]:
    """Topics that come back on at least TOPIC_MIN_DAYS distinct days, most days first."""
    rows = [r for r in memories if r.get("category") != "episode"]
    names = {n.casefold() for r in rows for n in (_speaker(r), r.get("user_id") or "") if n}
    seen: dict[str, list[dict]] = {}
    for r in rows:
        for word in topic_words(r.get("memory") or "", names):
            seen.setdefault(word, []).append(r)
    out = []
    for word, found in seen.items():
        days = {_when(r)[:10] for r in found if _when(r)}
        if len(days) >= TOPIC_MIN_DAYS:
            out.append(_entry(word, found, days=len(days), mentions=len(found),
                              participants=sorted({_speaker(r) for r in found if _speaker(r)})))
    out.sort(key=lambda e: (-e["days"], -e["mentions"], e["value"]))
    return out[:MAX_TOPICS]


def group_insights(memories: list[dict]) -> dict:
    """{"roles", "topics"} of a group from its live memories (Memory.get_profile(group_id=...))."""
    return {"roles": group_roles(memories), "topics": recurring_topics(memories)}


@answers_task("profile_update")
def offline_profile_answer(human: str) -> str:
    """The offline model's answer to the profile prompt: the profile rules' reading of each numbered fact
    (what a model would add for free text is beyond these rules)."""
    updates = []
    for line in human.splitlines():
        number, _, text = line.partition(". ")
        if number.strip().isdigit():
            updates += [{"fact": int(number), "op": c.op, "field": c.field, "value": c.value} for c in profile_changes(text)]
    return json.dumps({"updates": updates}, ensure_ascii=False)
