"""What a LangGraph store item becomes in MemoryX and back (memoryx.api.langgraph_store).

An item is one memory: its text is what MemoryX embeds, ranks and shows (`item_text`), and its metadata keeps
the item itself under `STORE_KEY`: namespace, key, the JSON value as put, the namespace's prefixes (so a search
by prefix is one metadata condition), whether it is indexed, and its TTL.

Value filters follow LangGraph's InMemoryStore (`value_matches`: equality, nested dicts, whole lists, and
$eq $ne $gt $gte $lt $lte); the scalar equalities are also handed to MemoryX as metadata conditions
(`pushdown`), which can only match more (a list holding the value matches too), never fewer, so the exact
test after them loses nothing.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

from langgraph.store.base import Item, SearchItem
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from memoryx.api.store_namespaces import prefix_key, prefix_keys
from memoryx.errors import InvalidInputError

STORE_KEY = "langgraph_store"  # the metadata key holding the item
_OPERATORS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}


def item_text(value: dict, fields: Sequence[str] | None) -> str:
    """The text MemoryX reads for an item: the index fields' texts, one per line. The whole value ("$", the
    default) reads as its string when it holds one string (LangMem's {"content": ...}), else as
    "field: value" lines, which rank better than JSON punctuation."""
    parts: list[str] = []
    for path in fields or ["$"]:
        if path == "$":
            parts.append(_whole(value))
        else:
            parts.extend(t for t in get_text_at_path(value, tokenize_path(path)) if t and t.strip())
    return "\n".join(p for p in parts if p.strip())


def _whole(value: dict) -> str:
    strings = [v for v in value.values() if isinstance(v, str) and v.strip()]
    if len(value) == 1 and len(strings) == 1:
        return strings[0]
    return "\n".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)}"
                     for k, v in value.items())


def item_metadata(namespace: tuple[str, ...], key: str, value: dict, *, indexed: bool, ttl: float | None) -> dict:
    entry: dict[str, Any] = {"namespace": list(namespace), "key": key, "value": value,
                             "prefixes": prefix_keys(namespace), "indexed": indexed}
    if ttl is not None:
        entry["ttl"] = float(ttl)
    return {STORE_KEY: entry}


def entry_of(memory: dict) -> dict | None:
    entry = (memory.get("metadata") or {}).get(STORE_KEY)
    return entry if isinstance(entry, dict) and "key" in entry else None


def _time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def to_item(memory: dict, entry: dict, score: float | None = None, search: bool = False) -> Item:
    common = {"namespace": tuple(entry["namespace"]), "key": entry["key"], "value": entry["value"],
              "created_at": _time(memory["created_at"]), "updated_at": _time(memory["updated_at"])}
    return SearchItem(**common, score=score) if search else Item(**common)


def expired(memory: dict, entry: dict, now: datetime) -> bool:
    """Past its TTL: the TTL counts from the last write or read (MemoryX records reads as accesses)."""
    ttl = entry.get("ttl")
    if ttl is None:
        return False
    last = _time(memory["updated_at"])
    if memory.get("last_accessed_at"):
        last = max(last, _time(memory["last_accessed_at"]))
    return now >= last + timedelta(minutes=float(ttl))


def namespace_filter(prefix: Sequence[str]) -> dict:
    return {f"metadata.{STORE_KEY}.prefixes": prefix_key(prefix)}


def pushdown(filter: dict | None) -> dict:
    """The part of a value filter MemoryX can apply (plain scalar equalities on top-level fields)."""
    out = {}
    for k, v in (filter or {}).items():
        if isinstance(v, (str, int, float)) and not isinstance(v, bool) and k.isidentifier():
            out[f"metadata.{STORE_KEY}.value.{k}"] = v
    return out


def check_filter(filter: Any) -> None:
    """Refuse a filter no item could be tested with, before anything is read."""
    if filter is None:
        return
    if not isinstance(filter, dict):
        raise InvalidInputError(f"filter is a dict of value fields, got {type(filter).__name__}.")
    for want in filter.values():
        if isinstance(want, dict):
            bad = [k for k in want if k.startswith("$") and k not in _OPERATORS]
            if bad:
                raise InvalidInputError(f"Unsupported filter operator {bad[0]!r}; use one of {sorted(_OPERATORS)}.")
            check_filter({k: v for k, v in want.items() if not k.startswith("$")})


def value_matches(value: dict, filter: dict | None) -> bool:
    return all(_compare(value.get(k), want) for k, want in (filter or {}).items())


def _compare(have: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_apply(have, op, arg) for op, arg in want.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return (isinstance(have, (list, tuple)) and len(have) == len(want)
                and all(_compare(h, w) for h, w in zip(have, want)))
    return have == want


def _apply(have: Any, op: str, arg: Any) -> bool:
    if op not in _OPERATORS:
        raise InvalidInputError(f"Unsupported filter operator {op!r}; use one of {sorted(_OPERATORS)}.")
    if op == "$eq":
        return have == arg
    if op == "$ne":
        return have != arg
    if have is None:
        return False  # a missing field is neither above nor below anything
    h, a = float(have), float(arg)
    return {"$gt": h > a, "$gte": h >= a, "$lt": h < a, "$lte": h <= a}[op]
