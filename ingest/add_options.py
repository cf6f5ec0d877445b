"""mem0's add options kept on the memory itself: `expiration_date` and `immutable`.

Both live in the memory's metadata (no SQL column, no migration): the vector stores already index and filter
metadata, and the history keeps them with every change.

- `expiration_date` "YYYY-MM-DD" (UTC, inclusive): stored as given plus `expires_ts`, the epoch second the
  day after it begins. Search and list add `alive_filter` (a memory without `expires_ts` is alive); get by id
  ignores it. Setting `expiration_date` to None (update) removes both keys, which brings the memory back.
- `immutable=True`: the judge may not UPDATE or DELETE the memory; `guard_immutable` (after the judge, in
  code) turns such an operation into an ADD of the new fact beside it (a DELETE into NONE), with the reason.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from memoryx.core.filters import EXPIRES_TS_KEY, alive_filter, with_alive  # noqa: F401 - part of this module's API
from memoryx.core.instants import day_after
from memoryx.core.runs import held_back
from memoryx.errors import InvalidInputError, ScopeError
from memoryx.ingest.messages import normalize_messages
from memoryx.ingest.multimodal import read_images
from memoryx.ingest.procedural import PROCEDURAL, summarize_run

EXPIRATION_KEY = "expiration_date"
IMMUTABLE_KEY = "immutable"


def _expires_ts(value: Any) -> tuple[str, float]:
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, str):
        try:
            value = date.fromisoformat(value.strip()[:10])
        except ValueError:
            raise InvalidInputError(f"expiration_date must be YYYY-MM-DD, got {value!r}.") from None
    if not isinstance(value, date):
        raise InvalidInputError(f"expiration_date must be YYYY-MM-DD, got {type(value).__name__}.")
    return value.isoformat(), day_after(value, EXPIRATION_KEY).timestamp()  # 9999-12-31 too (no day after it)


def option_metadata(metadata: dict | None, expiration_date: Any = None, immutable: bool | None = None) -> dict:
    """`metadata` with the options written in (as add stores them on every memory it creates). A metadata
    dict carrying `expiration_date` itself (e.g. an update clearing it with None) is normalised the same way."""
    meta = dict(metadata or {})
    if expiration_date is not None:
        meta[EXPIRATION_KEY] = expiration_date
    if EXPIRATION_KEY in meta:
        if meta[EXPIRATION_KEY] is None:
            meta.pop(EXPIRATION_KEY)
            meta.pop(EXPIRES_TS_KEY, None)
        else:
            meta[EXPIRATION_KEY], meta[EXPIRES_TS_KEY] = _expires_ts(meta[EXPIRATION_KEY])
    if immutable:
        meta[IMMUTABLE_KEY] = True
    return meta


def is_immutable(memory: dict | None) -> bool:
    return bool(((memory or {}).get("metadata") or {}).get(IMMUTABLE_KEY))


def immutable_ids(sql, candidates: list[dict]) -> set[str]:
    """Ids of the immutable memories among the judge's candidates (read from SQL, the system of record)."""
    ids = sorted({c["id"] for c in candidates if c.get("id")})
    return {row["id"] for row in sql.get_memories(ids) if is_immutable(row)} if ids else set()


def guard_immutable(operations: list[dict], frozen: set[str]) -> tuple[list[dict], list[str]]:
    """Operations with every UPDATE/DELETE of an immutable memory replaced, and a note per change: an UPDATE
    becomes an ADD of the new text beside the old memory, a DELETE becomes NONE; the reason says why."""
    out, notes = [], []
    for op in operations:
        event = op.get("event")
        if event in ("UPDATE", "DELETE") and op.get("id") in frozen:
            note = f"memory {op['id']} is immutable"
            op = held_back(op, note)
            notes.append(f"{note}: the judge's {event} was not applied")
        out.append(op)
    return out, notes


# --- custom instructions: per call over the settings -------------------------------------------

INSTRUCTION_KEYS = ("prompt", "update_prompt", "includes", "excludes", "custom_instructions", "categories")
def _setting_of(settings, key: str) -> Any:
    """The project-wide default of a per-call instruction."""
    return {"prompt": settings.custom_fact_extraction_prompt, "update_prompt": settings.custom_update_memory_prompt,
            "includes": settings.memory_includes, "excludes": settings.memory_excludes,
            "categories": settings.custom_categories}.get(key)


def check_categories(value: Any) -> dict[str, str] | None:
    """{name: description}; mem0's platform form (a list of one-key dicts) and a list of names are accepted."""
    if value is None:
        return None
    if isinstance(value, list):
        out: dict[str, str] = {}
        for item in value:
            if isinstance(item, str):
                out[item] = ""
            elif isinstance(item, dict):
                out.update(item)
            else:
                raise InvalidInputError(f"custom_categories items must be names or {{name: description}}, got {item!r}.")
        value = out
    if not isinstance(value, dict) or not all(isinstance(k, str) and k.strip() for k in value):
        raise InvalidInputError("custom_categories must be {name: description}.")
    return {k.strip(): str(v or "") for k, v in value.items()}


def instruction_input(**given: Any) -> dict | None:
    """The per-call instructions of an add (None when none is given), type-checked."""
    out: dict[str, Any] = {}
    for key, value in given.items():
        if value is None:
            continue
        if key == "categories":
            out[key] = check_categories(value)
        elif not isinstance(value, str):
            raise InvalidInputError(f"{key} must be a string, got {type(value).__name__}.")
        elif value.strip():
            out[key] = value.strip()
    return out or None


def effective_instructions(settings: Any, per_call: dict | None) -> dict:
    """The instructions an add run follows: each one given per call, else its setting."""
    per_call = per_call or {}
    out = {}
    for key in INSTRUCTION_KEYS:
        value = per_call.get(key)
        if value is None:
            value = _setting_of(settings, key)
        if value:
            out[key] = check_categories(value) if key == "categories" else value
    return out


def prepare_add(services: Any, vision_llm: Any, messages: Any, metadata: dict | None, infer: bool, *,
                agent_id: str | None = None, memory_type: str | None = None, prompt: str | None = None,
                **given: Any) -> tuple[Any, dict | None, bool, dict | None, list[str]]:
    """mem0's add options that change what is added: image parts read (memoryx.ingest.multimodal), a
    procedural run summarised for its agent (memoryx.ingest.procedural; `prompt` is then the summary's prompt), the
    custom instructions checked. Returns (messages, metadata, infer, instructions, warnings)."""

    if memory_type is not None and memory_type != PROCEDURAL:
        raise InvalidInputError(f"memory_type must be {PROCEDURAL!r} (or None), got {memory_type!r}.")
    messages, refs, warnings = read_images(messages, vision_llm)
    if refs:
        metadata = {**(metadata or {}), "images": refs}
    if memory_type != PROCEDURAL:
        return messages, metadata, infer, instruction_input(prompt=prompt, **given), warnings
    if not agent_id:
        raise ScopeError("memory_type='procedural_memory' needs an agent_id: the summary is that agent's memory.")

    summary = summarize_run(services.extraction_llm, normalize_messages(messages), prompt)
    return summary, {**(metadata or {}), "memory_type": PROCEDURAL}, False, None, warnings
