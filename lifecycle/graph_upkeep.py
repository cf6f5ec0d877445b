"""Graph upkeep of a consolidation pass: which entities are one, and which memories link.

Entity merge in two tiers over name-embedding cosine:
- >= consolidate_entity_merge_threshold (0.95): the same entity by rule, unless the names state different numbers
  ("2023" / "2024" embed almost alike);
- [consolidate_entity_judge_threshold, 0.95): only with the same entity_type and at least one shared neighbour (an
  entity both are related to; each other does not count).
The older entity (created_at, then id) survives, as for memories. Every pair above the lower threshold gets
a decision with its reason, kept or merged, for the judgment record.

Memory links (kind = the link's type, memoryx.core.link_types): `same_topic` between memories whose relations touch the same
entity (a hub entity such as the user, touching more than `max_group` memories, links nothing: it would
link everything), `follows` between consecutive memories of one run or session (metadata session_id),
`causes` where a memory's own words state the cause and another memory of the owner, sharing an entity with
it or next to it in time, restates that cause (memoryx.lifecycle.causal).
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import combinations

from memoryx.lifecycle.causal import CAUSE, causal_links
from memoryx.lifecycle.similarity import pair_key, survivors

_NUMBER = re.compile(r"\d+")
SAME_ENTITY, SEQUENCE = "same_topic", "follows"  # link types of memoryx.core.link_types


def scope_of_row(row: dict) -> tuple:
    return tuple(row.get(k) for k in ("user_id", "agent_id", "run_id", "group_id"))


def neighbours(relations: list[dict]) -> dict[str, set[str]]:
    """{entity id: ids of the entities its valid relations reach}."""
    out: dict[str, set[str]] = defaultdict(set)
    for r in relations:
        if r.get("valid") is False or r["source_id"] == r["target_id"]:
            continue
        out[r["source_id"]].add(r["target_id"])
        out[r["target_id"]].add(r["source_id"])
    return out


def entity_decisions(entities: dict[str, dict], pairs: dict[tuple[str, str], float], near: dict[str, set[str]],
                     merge_t: float, judge_t: float) -> tuple[list[dict], list[dict]]:
    """(merges {"survivor", "merged", "similarity", "reason", "names"}, every pair's decision
    {"a", "b", "names", "similarity", "merge": bool, "reason"})."""
    same: list[dict] = []
    decisions: list[dict] = []
    for (a, b), sim in sorted(pairs.items(), key=lambda kv: -kv[1]):
        ea, eb = entities[a], entities[b]
        names = [ea["name"], eb["name"]]
        shared = (near.get(a, set()) & near.get(b, set())) - {a, b}
        if sim < judge_t:
            continue
        if _NUMBER.findall(ea["name"]) != _NUMBER.findall(eb["name"]):
            ok, why = False, f"name cosine {sim:.3f} but the names state different numbers"
        elif sim >= merge_t:
            ok, why = True, f"name cosine {sim:.3f} >= {merge_t}"
        elif (ea.get("entity_type") or "entity") != (eb.get("entity_type") or "entity"):
            ok, why = False, (f"name cosine {sim:.3f} in [{judge_t}, {merge_t}) but types differ "
                              f"({ea.get('entity_type')} / {eb.get('entity_type')})")
        elif not shared:
            ok, why = False, f"name cosine {sim:.3f} in [{judge_t}, {merge_t}), same type, no shared neighbour"
        else:
            ok, why = True, (f"name cosine {sim:.3f} in [{judge_t}, {merge_t}), same type "
                             f"{ea.get('entity_type')}, {len(shared)} shared neighbour(s)")
        decisions.append({"a": a, "b": b, "names": names, "similarity": round(sim, 4), "merge": ok, "reason": why})
        if ok:
            same.append({"a": a, "b": b, "similarity": round(sim, 4), "reason": why, "by": "rule"})
    order = {i: (e.get("created_at") or "", i) for i, e in entities.items()}
    merges = survivors(same, order)
    for m in merges:
        m["names"] = {"survivor": entities[m["survivor"]]["name"], "merged": entities[m["merged"]]["name"]}
    return merges, decisions


def memory_links(memories: list[dict], relations: list[dict], entity_map: dict[str, str], max_group: int) -> list[dict]:
    """Links {"source_id", "target_id", "relation", "reason"} among `memories` (live ones, oldest first
    within a link), from the relations' entities (after `entity_map`: merged -> survivor) and the order
    within runs / sessions."""
    live = {m["id"]: m for m in memories}
    order = lambda mid: (live[mid].get("created_at") or "", mid)  # noqa: E731
    out: dict[tuple[str, str, str], dict] = {}

    def link(a: str, b: str, kind: str, reason: str) -> None:
        src, dst = sorted((a, b), key=order)
        out.setdefault((src, dst, kind), {"source_id": src, "target_id": dst, "relation": kind, "reason": reason})

    by_entity: dict[str, set[str]] = defaultdict(set)
    names: dict[str, str] = {}
    for r in relations:
        mid = r.get("memory_id")
        if r.get("valid") is False or mid not in live:
            continue
        for end, name in ((r["source_id"], r.get("source")), (r["target_id"], r.get("target"))):
            eid = entity_map.get(end, end)
            by_entity[eid].add(mid)
            names.setdefault(eid, name or eid)
    for eid, mids in sorted(by_entity.items()):
        if 2 <= len(mids) <= max_group:
            for a, b in combinations(sorted(mids), 2):
                link(a, b, SAME_ENTITY, f"both about {names[eid]!r}")
    runs: dict[tuple, list[str]] = defaultdict(list)
    for m in memories:
        session = (m.get("metadata") or {}).get("session_id")
        if m.get("run_id"):
            runs[("run", m["run_id"])].append(m["id"])
        elif isinstance(session, (str, int)) and not isinstance(session, bool):
            runs[("session", str(session))].append(m["id"])
    predecessor: dict[str, str] = {}
    for (kind, key), mids in sorted(runs.items()):
        mids.sort(key=order)
        for a, b in zip(mids, mids[1:]):
            link(a, b, SEQUENCE, f"one after the other in {kind} {key}")
            predecessor[b] = a
    near: dict[str, set[str]] = defaultdict(set)  # sharing a (non-hub) entity, or next to each other in time
    for mids in by_entity.values():
        if 2 <= len(mids) <= max_group:
            for a in mids:
                near[a].update(mids - {a})
    timeline = sorted(live, key=order)
    for a, b in zip(timeline, timeline[1:]):
        near[a].add(b)
        near[b].add(a)
    for c in causal_links(memories, near, predecessor):
        out.setdefault((c["source_id"], c["target_id"], CAUSE), c)  # the cause first, whatever the dates say
    return list(out.values())


def entity_pairs(hits: dict[str, list[tuple[str, float]]], entities: dict[str, dict]) -> dict[tuple[str, str], float]:
    """Symmetric pairs of the same exact scope from each entity's nearest names."""
    pairs: dict[tuple[str, str], float] = {}
    for a, found in hits.items():
        for b, sim in found:
            if b == a or b not in entities or scope_of_row(entities[a]) != scope_of_row(entities[b]):
                continue
            key = pair_key(a, b)
            pairs[key] = max(pairs.get(key, 0.0), float(sim))
    return pairs
