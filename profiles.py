"""User and group profiles (issue 13, seeds 003/004): what the memories say about who someone is.

A user profile holds name and aliases, home, work, relationships, preferences and dislikes, goals; each value
with the memory ids it came from and when it changed. It is kept by the add graph's `update_profile` node
from the memories an add run wrote (`profile_changes`: rules over the fact text, English / Chinese /
Japanese, covering the canonical statements of the offline model and the usual third-person fact styles of
real models: "User lives in X", "Lives in X", "用户住在X", "ユーザーはXに住んでいる"), optionally completed by a
model call for free text (MEMORYX_PROFILE_MODEL, prompts/profile.py). Rows live in SQL (`profile_values`,
stores/sql/profiles.py); `build_profile` turns them into the dict `Memory.get_profile` returns.

A group profile (subject "group:<id>") holds the group's members, roles and recurring topics.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

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
