"""Export and import of a scope: JSONL, one record per line, read back with identical ids.

    {"type": "memoryx_export", "version": 1, "scope": {...}, "exported_at": ...}
    {"type": "memory", "id", "memory", "user_id", "agent_id", "run_id", "category", "importance",
     "memory_type", "metadata", "created_at", "updated_at", "history": [{"event", "old_memory", "new_memory",
     "actor", "trace_id", "created_at"}]}
    {"type": "entity", "id", "name", "entity_type", "user_id", "agent_id", "run_id"}
    {"type": "relation", "id", "source_id", "relation", "target_id", "memory_id", "user_id", ...}   (valid ones)
    {"type": "profile_value", "field", "value", "memory_ids", "source", "ended_at"}   (the user's profile)

Import writes through the stores' own replay-safe inserts (memories with their ids, text, metadata and
creation time; entities and relations with their ids), then projects them (vectors re-embedded from the
text, graph), so the same search gives the same results in the new data directory. The history of each
memory is imported as recorded. Deleted memories and invalidated relations are not exported.

A mem0 export is accepted too: a JSON list (or {"results"|"memories": [...]}) of {id, memory, metadata,
created_at, user_id, agent_id, run_id, categories?} — mem0's get_all / export shape — imported as memories
with their ids (mem0's categories kept in metadata.categories).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.ingest.add_options import option_metadata
from memoryx.knowledge.profiles import user_subject, value_key

FORMAT = "memoryx_export"
VERSION = 1
_MEMORY_KEYS = ("id", "memory", "user_id", "agent_id", "run_id", "category", "importance", "memory_type",
                "metadata", "created_at", "updated_at", "group_id", "valid_at")  # group chats, event time


def export_records(services, scope: Scope) -> Iterator[dict]:
    """The records of a scope's export, header first (memories newest first, then the graph)."""
    sql = services.sql
    yield {"type": FORMAT, "version": VERSION, "scope": scope.as_dict(),
           "exported_at": datetime.now(timezone.utc).isoformat()}
    offset = 0
    exported: set[str] = set()
    while True:
        page = sql.list_memories(scope, limit=500, offset=offset)
        exported.update(m["id"] for m in page)
        for m in page:
            history = [{k: h.get(k) for k in ("event", "old_memory", "new_memory", "actor", "trace_id", "created_at")}
                       for h in sql.history(m["id"])]
            yield {"type": "memory", **{k: m.get(k) for k in _MEMORY_KEYS}, "history": history}
        if len(page) < 500:
            break
        offset += 500
    for e in sql.list_entities(scope):
        yield {"type": "entity", **{k: e.get(k) for k in ("id", "name", "entity_type", "user_id", "agent_id", "run_id")}}
    for r in sql.list_relations(scope):
        yield {"type": "relation", **{k: r.get(k) for k in ("id", "source_id", "relation", "target_id", "memory_id",
                                                             "trace_id", "user_id", "agent_id", "run_id")}}
    if scope.user_id and not scope.group_id:  # the profile is the user's (its name resolves "Alice" to them)
        narrower = bool(scope.agent_id or scope.run_id)
        for v in sql.profile_values(user_subject(scope.user_id), include_ended=True):
            if narrower and not exported & set(v.get("memory_ids") or []):
                continue  # a value counts in a scope while a memory inside it backs it (core.authorization)
            yield {"type": "profile_value", **{k: v.get(k) for k in ("field", "value", "memory_ids", "source",
                                                                       "ended_at")}}


def export_jsonl(services, scope: Scope) -> Iterator[str]:
    for record in export_records(services, scope):
        yield json.dumps(record, ensure_ascii=False, default=str) + "\n"


def parse(text: str) -> list[dict]:
    """Records of a MemoryX JSONL export, or of a mem0 export (JSON), as MemoryX records."""
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n" in stripped.strip():
        first = json.loads(stripped.split("\n", 1)[0])
        if isinstance(first, dict) and first.get("type") == FORMAT:
            return [json.loads(line) for line in stripped.splitlines() if line.strip()]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"Not a MemoryX JSONL export nor a mem0 JSON export: {exc}") from None
    if isinstance(data, dict):
        data = next((data[k] for k in ("results", "memories") if isinstance(data.get(k), list)), None)
    if not isinstance(data, list):
        raise InvalidInputError("A mem0 export is a list of memories (or {'results': [...]}).")
    return [_from_mem0(item, i) for i, item in enumerate(data)]


def _from_mem0(item: Any, i: int) -> dict:
    if not isinstance(item, dict) or not isinstance(item.get("memory"), str):
        raise InvalidInputError(f"mem0 export item {i} has no 'memory' text.")
    meta = dict(item.get("metadata") or {})
    if item.get("categories"):
        meta.setdefault("categories", list(item["categories"]))
    for key in ("immutable", "expiration_date"):
        if item.get(key):
            meta.setdefault(key, item[key])
    return {"type": "memory", "id": item.get("id"), "memory": item["memory"], "metadata": meta,
            "created_at": item.get("created_at"), "user_id": item.get("user_id"), "agent_id": item.get("agent_id"),
            "run_id": item.get("run_id"), "history": []}


def _when(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def import_records(services, records: Iterable[dict], *, scope: Scope | None = None) -> dict:
    """Write the records (a MemoryX or mem0 export) into these stores; `scope` overrides each record's scope.
    Re-importing the same file changes nothing (ids are kept; the inserts are replay-safe)."""

    sql = services.sql
    counts = {"memories": 0, "entities": 0, "relations": 0}
    memory_ids, entity_ids, relations, profile = [], [], [], []
    exported_user = None
    for rec in records:
        kind = rec.get("type")
        if kind == FORMAT:
            exported_user = (rec.get("scope") or {}).get("user_id")
            continue
        if kind == "profile_value":
            profile.append(rec)
            continue
        if kind not in ("memory", "entity", "relation"):
            continue  # the header (and record types of later versions)
        where = scope or Scope(user_id=rec.get("user_id"), agent_id=rec.get("agent_id"), run_id=rec.get("run_id"),
                               group_id=rec.get("group_id"))
        if kind == "memory":
            row = sql.insert_memory(scope=where, text=rec["memory"], category=rec.get("category"),
                                    importance=float(rec.get("importance") if rec.get("importance") is not None else 0.5),
                                    memory_type=rec.get("memory_type") or "fact",
                                    metadata=option_metadata(rec.get("metadata")), memory_id=rec.get("id"),
                                    created_at=_when(rec.get("created_at")), actor="import",
                                    valid_at=rec.get("valid_at") or None)
            if rec.get("history"):
                sql.replace_history(row["id"], rec["history"])
            memory_ids.append(row["id"])
            counts["memories"] += 1
        elif kind == "entity":
            row = sql.upsert_entity(scope=where, name=rec["name"], entity_type=rec.get("entity_type") or "entity",
                                    entity_id=rec.get("id"))
            entity_ids.append(row["id"])
            counts["entities"] += 1
        elif kind == "relation":
            relations.append(sql.add_relation(scope=where, source_id=rec["source_id"], relation=rec["relation"],
                                              target_id=rec["target_id"], memory_id=rec.get("memory_id"),
                                              trace_id=rec.get("trace_id"), relation_id=rec.get("id")))
            counts["relations"] += 1
    user = scope.user_id if scope is not None else exported_user
    counts["profile_values"] = _import_profile(sql, profile, user) if profile and user else 0
    projector = services.projector
    projector.sync_memories(memory_ids)
    if services.graph is not None:
        projector.sync_entities(entity_ids)
        projector.sync_relations(relations)
    return counts


def _import_profile(sql, values: list[dict], user_id: str) -> int:
    """The exported user's profile values, each backed by its memories again (replay-safe: `add` of a value
    already there only adds missing memory ids); ended values end again."""
    changes = []
    for v in values:
        key = value_key(v["value"])
        for mid in v.get("memory_ids") or [None]:
            changes.append({"op": "add", "field": v["field"], "value": v["value"], "key": key, "memory_id": mid,
                            "source": v.get("source") or "rule"})
        if v.get("ended_at"):
            changes.append({"op": "end", "field": v["field"], "value": v["value"], "key": key})
    sql.apply_profile_changes(user_subject(user_id), changes)
    return len(values)
