"""Function-calling tools of the knowledge-graph steps (pydantic schemas, bound with `bind_tools`).

Same tool names and argument names as mem0's graphs/tools.py (extract_entities, establish_relationships,
delete_graph_memory) so prompts and traces read alike; `establish_relationships` takes `relations` (mem0
calls that list `entities`, which confuses models) and each relation may carry the index of the memory it
came from. The parsers below accept both spellings and the usual deviations of real models; reading tool
calls and JSON out of an answer is `memoryx.models.llm_io`'s job.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field

from memoryx.core.text import CJK_CHAR
from memoryx.models.llm_io import loads_lenient

EXTRACT_ENTITIES = "extract_entities"
ESTABLISH_RELATIONSHIPS = "establish_relationships"
DELETE_GRAPH_MEMORY = "delete_graph_memory"


class EntityItem(BaseModel):
    entity: str = Field(description="The entity's name, in the text's language; the user's id for self-references.")
    entity_type: str = Field(description="A short general type: person, city, organization, food, activity, ...")


class ExtractEntities(BaseModel):
    """Extract the entities of the text and their types."""

    model_config = ConfigDict(title=EXTRACT_ENTITIES)
    entities: list[EntityItem] = Field(description="Every entity stated in the text.")


class RelationItem(BaseModel):
    source: str = Field(description="Source entity (the user's id for self-references).")
    relationship: str = Field(description="Timeless relation name: lowercase snake_case English (works_at) or natural Chinese (工作于).")
    destination: str = Field(description="Destination entity.")
    memory: int | None = Field(default=None, description="Number [n] of the memory the relation comes from.")


class EstablishRelationships(BaseModel):
    """Establish the relations among the extracted entities."""

    model_config = ConfigDict(title=ESTABLISH_RELATIONSHIPS)
    relations: list[RelationItem] = Field(description="Every relation stated in the text (may be empty).")


class DeleteGraphMemory(BaseModel):
    """Mark one existing relation of the graph as outdated or contradicted by the new information."""

    model_config = ConfigDict(title=DELETE_GRAPH_MEMORY)
    source: str = Field(description="Source entity of the existing relation, exactly as listed.")
    relationship: str = Field(description="Relation name of the existing relation, exactly as listed.")
    destination: str = Field(description="Destination entity of the existing relation, exactly as listed.")


EXTRACTION_TOOLS = [ExtractEntities, EstablishRelationships]
DELETE_TOOLS = [DeleteGraphMemory]

# (model, tools, tool_choice) -> the bound model: `bind_tools` turns the pydantic schemas into JSON schemas on
# every call (~1 ms per tool set), and the graph steps bind the same tools to the same model on every add.
# A few entries; the model is held (and compared by identity), never re-used for another.
_BOUND: list[tuple[Any, tuple, Any, Any]] = []
_BOUND_MAX = 8
_BOUND_LOCK = threading.Lock()


def bind_graph_tools(llm, tools: list, tool_choice: str | None = None):
    """`llm.bind_tools(tools[, tool_choice])`, built once per model and tool set."""
    key = tuple(tools)
    with _BOUND_LOCK:
        for held, held_tools, held_choice, bound in _BOUND:
            if held is llm and held_tools == key and held_choice == tool_choice:
                return bound
    bound = llm.bind_tools(list(tools), tool_choice=tool_choice) if tool_choice else llm.bind_tools(list(tools))
    with _BOUND_LOCK:
        _BOUND.insert(0, (llm, key, tool_choice, bound))
        del _BOUND[_BOUND_MAX:]
    return bound


def tool_names(tools) -> set[str]:
    """Names of bound tools given as pydantic classes, OpenAI dicts, BaseTools or functions."""

    names: set[str] = set()
    for tool in tools or []:
        try:
            spec = tool if isinstance(tool, dict) and "function" in tool else convert_to_openai_tool(tool)
            names.add(spec["function"]["name"])
        except Exception:  # noqa: BLE001 - an unknown tool shape names nothing
            name = getattr(tool, "name", None) or (tool.get("name") if isinstance(tool, dict) else None)
            if name:
                names.add(name)
    return names


# --- names -------------------------------------------------------------------------------------------

_QUOTES = "\"'`“”‘’「」『』《》<>[]()（）"
_SELF = {s.casefold() for s in (
    "i", "me", "my", "mine", "myself", "user", "the user", "the_user", "user_id", "userid", "self",
    "我", "我的", "自己", "本人", "用户", "私", "僕", "俺", "わたし", "ユーザー",
)}


def has_cjk(text: str) -> bool:
    return bool(CJK_CHAR.search(text or ""))


def clean_name(value) -> str:
    """An entity name as a model wrote it, trimmed of quotes, brackets and end punctuation."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return ""
    name = unicodedata.normalize("NFKC", str(value)).strip().strip(_QUOTES).strip()
    name = name.rstrip(".,;:!?。，；：！？、").strip()
    return " ".join(name.split())[:200]


def resolve_self(name: str, user_id: str) -> str:
    """Self-references ("I", "me", "我", "私", "USER_ID", ...) become the user's id."""
    if name.casefold() in _SELF or name in ("USER_ID", "{user_id}"):
        return user_id
    return name


def normalize_relation(value) -> str:
    """Relation names: latin ones lowercase snake_case ("Works At" -> "works_at"); CJK ones kept as written
    without spaces or punctuation. Empty string when nothing usable is left."""
    if not isinstance(value, str):
        return ""
    rel = unicodedata.normalize("NFKC", value).strip().strip(_QUOTES).strip()
    if has_cjk(rel):
        rel = re.sub(r"[\s\W_]+", "", rel)
    else:
        rel = re.sub(r"[^0-9a-z]+", "_", rel.lower()).strip("_")
    return rel[:64]


# --- argument shapes --------------------------------------------------------------------------------------

_SOURCE_KEYS = ("source", "source_entity", "source_node", "subject", "head", "from", "src")
_REL_KEYS = ("relationship", "relation", "relation_type", "relationship_type", "predicate", "type", "rel")
_DEST_KEYS = ("destination", "target", "destination_entity", "target_node", "destination_node", "object",
              "tail", "to", "dst")
_MEMORY_KEYS = ("memory", "memory_index", "memory_ref", "ref", "index", "source_memory")


def _first(item: dict, keys) -> object:
    for key in keys:
        if key in item and item[key] not in (None, ""):
            return item[key]
    return None


def _items(args, keys) -> list:
    """The list inside tool arguments: {"relations": [...]}, {"entities": [...]}, a bare list, or one item."""
    if isinstance(args, list):
        return args
    if isinstance(args, dict):
        for key in keys:
            value = args.get(key)
            if isinstance(value, list):
                return value
            if isinstance(value, str):  # a JSON string inside the arguments
                parsed = loads_lenient(value)
                if isinstance(parsed, list):
                    return parsed
        return [args]
    return []


def parse_entity_items(args) -> list[dict]:
    """[{"name", "entity_type"}] from extract_entities arguments; malformed items are skipped."""
    out = []
    for item in _items(args, ("entities", "nodes", "items")):
        if isinstance(item, str):
            name, etype = clean_name(item), "entity"
        elif isinstance(item, dict):
            name = clean_name(_first(item, ("entity", "name", "entity_name", "node", "id")))
            etype = clean_name(_first(item, ("entity_type", "type", "label", "category"))) or "entity"
        else:
            continue
        if name:
            out.append({"name": name, "entity_type": etype.lower().replace(" ", "_")[:64]})
    return out


def parse_relation_items(args) -> list[dict]:
    """[{"source", "relation", "destination", "memory"}] from establish_relationships / delete_graph_memory
    arguments (also mem0's {"entities": [...]} spelling and [s, r, d] triples); malformed items skipped."""
    out = []
    for item in _items(args, ("relations", "relationships", "entities", "delete", "deletions", "items", "triples")):
        memory = None
        if isinstance(item, (list, tuple)) and len(item) >= 3:
            source, relation, destination = item[0], item[1], item[2]
        elif isinstance(item, dict):
            source, relation, destination = _first(item, _SOURCE_KEYS), _first(item, _REL_KEYS), _first(item, _DEST_KEYS)
            memory = _first(item, _MEMORY_KEYS)
        else:
            continue
        source, destination, relation = clean_name(source), clean_name(destination), normalize_relation(relation)
        if not (source and destination and relation):
            continue
        if isinstance(memory, str):
            m = re.search(r"\d+", memory)
            memory = int(m.group()) if m else None
        out.append({"source": source, "relation": relation, "destination": destination,
                    "memory": memory if isinstance(memory, int) and not isinstance(memory, bool) else None})
    return out
