"""The graph half of the offline model: deterministic answers to the knowledge-graph prompts.

`OfflineChatModel` (models/offline.py) hands a request here when `handles(messages, tools)` is true: the
graph tools are bound, or (JSON mode, no tools) the system prompt carries a graph task tag of
prompts/graph.py. `respond(messages, tools)` answers as a real model would: tool calls when tools are
bound, one JSON object otherwise.

What it understands is the statement set of models/offline_rules.py (name, home, move, work, like and the
retraction of a like, in English, Chinese and Japanese), in first person ("I live in Berlin"), in the
canonical memory form ("User lives in Berlin", "用户住在北京"), without a subject ("Lives in Berlin",
"住在北京") and with a named subject ("张三在北京工作", "John works at Acme"; 他/她 refer back to it).

* extraction: the subject (the user's id for the user) and the value become entities; relations use the
  shared names of offline_rules.RELATION_NAMES: lives_in / 住在, works_at / 工作于, likes / 喜欢,
  is_named / 名叫 (a move is lives_in). Retractions yield no relation.
* conflicts: an existing relation is named outdated when a new value of the same single-valued attribute
  (home, work, name) arrives for the same subject, or when the new information retracts a like.
"""

from __future__ import annotations

import json
import re
import uuid

from langchain_core.messages import AIMessage

from memoryx.core import lexicon
from memoryx.models.graph_tools import (
    DELETE_GRAPH_MEMORY,
    ESTABLISH_RELATIONSHIPS,
    EXTRACT_ENTITIES,
    tool_names,
)
from memoryx.models.llm_io import message_text
from memoryx.models.offline_rules import (
    ENTITY_TYPES,
    RELATION_NAMES,
    SINGLE_VALUED,
    Statement,
    detect_language,
    normalize_value,
    parse_statement,
    split_clauses,
)
from memoryx.prompts.graph import (
    EXISTING_HEADER,
    MEMORIES_HEADER,
    NEW_INFO_HEADER,
    NEW_RELATIONS_HEADER,
    TAG_DELETE,
    TAG_EXTRACT,
    TAG_RELATIONS,
    USER_ID_HEADER,
)

GRAPH_TOOLS = {EXTRACT_ENTITIES, ESTABLISH_RELATIONSHIPS, DELETE_GRAPH_MEMORY}
# relation name (any language) -> attribute
_ATTRIBUTE_OF = {name: attr for attr, names in RELATION_NAMES.items() for name in names.values()}
_ATTRIBUTE_OF.update(lexicon.mapping("offline.relation_alias", "en"))  # what other models name them


# --- message access ---------------------------------------------------------------------------------------


def _role_text(message) -> tuple[str, str]:
    if isinstance(message, dict):
        return str(message.get("role", "")), str(message.get("content", ""))
    if isinstance(message, (tuple, list)) and len(message) == 2:
        return str(message[0]), str(message[1])
    return str(getattr(message, "type", "")), message_text(message)


def _system_text(messages) -> str:
    return "\n".join(text for role, text in map(_role_text, messages) if role in ("system",))


def _user_text(messages) -> str:
    texts = [text for role, text in map(_role_text, messages) if role in ("human", "user")]
    return texts[0] if texts else ""  # the first user message carries the task; later ones are retry notes


def _task(messages, tools) -> str | None:
    names = tool_names(tools)
    if DELETE_GRAPH_MEMORY in names:
        return "delete"
    if EXTRACT_ENTITIES in names:
        return "extract"
    if ESTABLISH_RELATIONSHIPS in names:
        return "relations"
    system = _system_text(messages)
    for tag, task in ((TAG_DELETE, "delete"), (TAG_EXTRACT, "extract"), (TAG_RELATIONS, "relations")):
        if tag in system:
            return task
    return None


def handles(messages, tools=None) -> bool:
    """True for the graph steps' requests (graph tools bound, or a graph task tag in the system prompt)."""
    return _task(messages, tools) is not None


# --- statements with subjects -----------------------------------------------------------------------------

_ZH_SUBJECT = lexicon.compile(r"^(?P<s>[\u4e00-\u9fff]{2,4}?)"
                              r"(?=<@offline.subject_adverb:zh>*<@offline.subject_verb:zh>)")
_EN_SUBJECT = lexicon.compile(r"^(?P<s>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s+"
                              r"(?=(?:<@offline.subject_adverb:en>\s+)?<@offline.subject_verb:en>\b)")
_PRONOUN = lexicon.compile(r"^(?:<@offline.he_she:zh>|<@offline.he_she:en>\s)", re.I)  # "他喜欢喝咖啡" after "张三..."
_USER_WORDS = lexicon.words("offline.user_word")


def _parse_clause(clause: str, last_subject: str | None) -> tuple[Statement, str | None] | None:
    """(statement, subject) of one clause; subject None means the user."""
    st = parse_statement(clause)
    if st is not None:
        return st, None
    lang = detect_language(clause)
    pronoun = _PRONOUN.match(clause) if last_subject else None
    if pronoun:
        rest = clause[pronoun.end():].strip()
        found = _parse_clause(("用户" if lang != "en" else "User ") + rest, None)
        return (found[0], last_subject) if found else None
    m = (_ZH_SUBJECT if lang == "zh" else _EN_SUBJECT if lang == "en" else None)
    m = m.match(clause) if m else None
    if m and m.group("s").lower() not in _USER_WORDS:
        rest = clause[m.end():].strip()
        st = parse_statement(("用户" if lang == "zh" else "User ") + rest)
        if st is not None:
            return st, m.group("s")
    # a memory without a subject: "Lives in Berlin", "住在北京", "東京に住んでいる"
    prefixed = {"zh": "用户" + clause, "ja": "ユーザーは" + clause, "en": "User " + clause[:1].lower() + clause[1:]}[lang]
    st = parse_statement(prefixed)
    return (st, None) if st is not None else None


def _statements(text: str) -> list[tuple[Statement, str | None]]:
    out, last = [], None
    for clause in split_clauses(text):
        found = _parse_clause(clause, last)
        if found:
            out.append(found)
            last = found[1] or last
    return out


_VERB_BEFORE_THING = lexicon.words("offline.graph_verb_before_thing", "zh")  # (not 打: 打篮球 is the game)


def _value(st: Statement) -> str:
    value = st.value.strip()
    if st.lang == "zh" and st.attribute == "like" and len(value) > 1 and value[0] in _VERB_BEFORE_THING:
        value = value[1:]  # 喜欢喝咖啡 -> 咖啡
    return value


# --- extraction ---------------------------------------------------------------------------------------------


def _header_value(text: str, header: str) -> str:
    for line in text.splitlines():
        if line.startswith(header):
            return line[len(header):].strip()
    return ""


def _section(text: str, header: str) -> list[str]:
    """The lines under a header, up to the next header line (a line ending with ':')."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip() == header:
            inside = True
            continue
        if inside:
            if re.match(r"^[A-Z][A-Za-z ]+:$", line.strip()):
                break
            if line.strip():
                lines.append(line.strip())
    return lines


def extract(user_text: str) -> tuple[list[dict], list[dict]]:
    """(entities [{entity, entity_type}], relations [{source, relationship, destination, memory}])."""
    user_id = _header_value(user_text, USER_ID_HEADER) or "user"
    entities: dict[str, dict] = {}
    relations: list[dict] = []
    for line in _section(user_text, MEMORIES_HEADER):
        m = re.match(r"^\[(\d+)\]\s*(.*)$", line)
        index, text = (int(m.group(1)), m.group(2)) if m else (0, line)
        for st, subject in _statements(text):
            if not st.polarity:
                continue  # a retraction is not a relation
            source = subject or user_id
            value = _value(st)
            entities.setdefault(source, {"entity": source, "entity_type": "person"})
            entities.setdefault(value, {"entity": value, "entity_type": ENTITY_TYPES[st.attribute]})
            relations.append({"source": source, "relationship": st.relation(), "destination": value, "memory": index})
    return list(entities.values()), relations


# --- conflicts ----------------------------------------------------------------------------------------------

_TRIPLE = re.compile(r"^(?:\[r?\d+\]\s*)?(?P<s>.+?)\s+--\s+(?P<r>.+?)\s+--\s+(?P<d>.+)$")


def _triples(lines: list[str]) -> list[tuple[str, str, str]]:
    return [(m.group("s").strip(), m.group("r").strip(), m.group("d").strip()) for m in map(_TRIPLE.match, lines) if m]


def conflicts(user_text: str) -> list[dict]:
    """[{source, relationship, destination}] of existing relations outdated by the new information."""
    user_id = _header_value(user_text, USER_ID_HEADER) or "user"
    existing = _triples(_section(user_text, EXISTING_HEADER))
    new = [(normalize_value(s), _ATTRIBUTE_OF.get(r), normalize_value(d)) for s, r, d in _triples(_section(user_text, NEW_RELATIONS_HEADER))]
    retracted = []
    for line in _section(user_text, NEW_INFO_HEADER):
        for st, subject in _statements(line.lstrip("- ").strip()):
            source = normalize_value(subject or user_id)
            if st.polarity:
                new.append((source, st.attribute, normalize_value(_value(st))))
            elif st.attribute in ("like", "work"):
                retracted.append((source, st.attribute, normalize_value(_value(st))))
    out = []
    for s, r, d in existing:
        key_s, attr, key_d = normalize_value(s), _ATTRIBUTE_OF.get(r), normalize_value(d)
        replaced = attr in SINGLE_VALUED and any(ns == key_s and na == attr and nd != key_d for ns, na, nd in new) and not any(
            ns == key_s and na == attr and nd == key_d for ns, na, nd in new
        )
        dropped = any(rs == key_s and ra == attr and (rv == key_d or rv in key_d or key_d in rv) for rs, ra, rv in retracted)
        if replaced or dropped:
            out.append({"source": s, "relationship": r, "destination": d})
    return out


# --- the answer ---------------------------------------------------------------------------------------------


def _call(name: str, args: dict) -> dict:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def respond(messages, tools=None) -> AIMessage:
    """The offline model's answer to a graph request (tool calls when tools are bound, else JSON text)."""
    task = _task(messages, tools)
    names = tool_names(tools)
    user_text = _user_text(messages)
    if task == "delete":
        deletions = conflicts(user_text)
        if DELETE_GRAPH_MEMORY in names:
            return AIMessage(content="", tool_calls=[_call(DELETE_GRAPH_MEMORY, d) for d in deletions])
        return AIMessage(content=json.dumps({"delete": deletions}, ensure_ascii=False))
    entities, relations = extract(user_text) if task else ([], [])
    if names & GRAPH_TOOLS:
        calls = []
        if EXTRACT_ENTITIES in names:
            calls.append(_call(EXTRACT_ENTITIES, {"entities": entities}))
        if ESTABLISH_RELATIONSHIPS in names:
            calls.append(_call(ESTABLISH_RELATIONSHIPS, {"relations": relations}))
        return AIMessage(content="", tool_calls=calls)
    if task == "relations":
        return AIMessage(content=json.dumps({"relations": relations}, ensure_ascii=False))
    return AIMessage(content=json.dumps({"entities": entities, "relations": relations}, ensure_ascii=False))
