"""Why a memory is remembered: everything the stores know about one memory, gathered in one answer.

    explain(services, memory_id) -> {
        "memory": the row,
        "importance": {"score" (as stored), "now" (recency read at `now`), "factors": {scarcity, impact,
                       impact_by, recency, certainty, certainty_by, event_at}, "weights"},
        "confidence", "layer", "strength_days", "retention",
        "judgments": [{"trace_id", "event", "reason", "fact", "model_name", "status", "source_messages"}],
        "links": [{"relation", "direction", "other_id", "other_memory"}],
        "history": [...oldest first],
    }

Each run that touched the memory (its history's trace ids) contributes one judgment entry: the operation
the judge decided for this memory with its reason, the extracted fact behind it and the messages it came
from (the raw input kept for the run, while retention keeps it). A memory written without a judgment
(infer=False, an import, a consolidation summary) has entries without a reason, and says so.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memoryx.core.scope import Scope
from memoryx.errors import NotFoundError
from memoryx.knowledge.importance import WEIGHTS, importance_at
from memoryx.lifecycle.forgetting import retention, strength
from memoryx.lifecycle.layers import layer_of

if TYPE_CHECKING:
    from memoryx.runtime.services import Services


_ID_KEYS = ("id", "survivor", "merged", "source_id", "target_id")


def _pass_reasons(decisions: dict, memory_id: str) -> str | None:
    """The reasons of a consolidation pass's decisions that name this memory ("archives: R = ...")."""
    out = []
    for kind, items in decisions.items():
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            named = any(item.get(k) == memory_id for k in _ID_KEYS) or memory_id in (item.get("sources") or [])
            if named and item.get("reason"):
                out.append(f"{kind}: {item['reason']}")
    return "; ".join(out) or None


def _judgment_entry(services: "Services", memory_id: str, trace_id: str) -> dict:
    entry: dict[str, Any] = {"trace_id": trace_id}
    try:
        record = services.sql.get_judgment(trace_id)
    except NotFoundError:
        record = None
    if record is not None and not isinstance(record.get("parsed_operations") or [], list):
        # a consolidation pass: its decisions are lists of merges, summaries, archives, promotions, links
        entry.update(event=record.get("operation_type"), reason=_pass_reasons(record["parsed_operations"], memory_id)
                     or record.get("reasoning"), fact=None, model_name=record.get("model_name"),
                     status=record.get("status"), judged_at=record.get("created_at"))
        source_index = None
    elif record is not None:
        parsed = record.get("parsed_operations") or []
        mine = [e for e in record.get("executed_operations") or [] if e.get("id") == memory_id]
        done = mine[-1] if mine else {}
        op = parsed[done["op"]] if isinstance(done.get("op"), int) and done["op"] < len(parsed) else {}
        facts = record.get("extracted_facts") or []
        fi = op.get("fact_index")
        fact = facts[fi] if isinstance(fi, int) and 0 <= fi < len(facts) else None
        entry.update(event=done.get("event") or op.get("event"), reason=op.get("reason") or done.get("reason"),
                     fact=fact, model_name=record.get("model_name"), status=record.get("status"),
                     judged_at=record.get("created_at"))
        source_index = (fact or {}).get("source_index")
    else:
        entry.update(event=None, reason="no judgment record (written without inference, imported, or pruned)")
        source_index = None
    try:
        messages = services.sql.get_raw_input(trace_id)["messages"]
    except NotFoundError:
        messages = []
    if isinstance(source_index, int) and 0 <= source_index < len(messages):
        messages = [messages[source_index]]
    entry["source_messages"] = messages
    return entry


def explain(services: "Services", memory_id: str, *, scope: Scope | None = None, now: float | None = None) -> dict:
    """The explanation of one memory (see the module docstring). NotFoundError outside `scope`."""
    sql = services.sql
    memory = sql.get_memory(memory_id, scope=scope, include_deleted=True)
    history = sql.history(memory_id)
    traces = list(dict.fromkeys([h["trace_id"] for h in history if h.get("trace_id")]
                                + ([memory["trace_id"]] if memory.get("trace_id") else [])))
    now = time.time() if now is None else now
    links = []
    for link in sql.memory_links([memory_id], depth=1):
        outgoing = link["source_id"] == memory_id
        links.append({"relation": link["relation"], "direction": "out" if outgoing else "in",
                      "other_id": link["target_id"] if outgoing else link["source_id"], "id": link["id"]})
    others = {m["id"]: m["memory"] for m in sql.get_memories([lk["other_id"] for lk in links])} if links else {}
    for link in links:
        link["other_memory"] = others.get(link["other_id"])
    factors = memory.get("importance_factors")
    return {
        "memory": memory,
        "importance": {"score": memory.get("importance"), "now": importance_at(memory, now), "factors": factors,
                       "weights": dict(WEIGHTS) if factors else None,
                       "reasoned": bool(factors)},
        "confidence": memory.get("confidence"),
        "layer": layer_of(memory),
        "status": memory.get("status"),
        "strength_days": round(strength(memory), 1),
        "retention": round(retention(memory, now), 4),
        "judgments": [_judgment_entry(services, memory_id, t) for t in traces],
        "links": links,
        "history": history,
    }
