"""graph_recall: from the scope's entities the query names (found by analyze_query: exact normalised match of
the query's n-grams, in its one read transaction), when the plan walks the graph, GraphStore.neighbourhood (expand_depth 1-2 hops,
optional relation names, invalidated edges hidden unless include_invalid) and the memories attached to the
reached relations, scored by distance: 1 / hops.

The entities found are written even when the graph is not walked: ranking uses their names. A question about the
user's own life ("my dog's name") also walks one hop from the entities of its best keyword hits and keeps the
relations that name one of its words (memoryx.search.relations; the walk is one statement on the system of
record, memoryx.search.reads.relations_near_hits, not a graph round trip): the memory stating the relation is
found even when it shares no word with the question. Any other query that names no entity of the scope costs
nothing here. Filters are applied later, on the SQL rows (expand_context), since relations carry no memory
payload.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.runtime.context import Context, services_of
from memoryx.search.reads import relations_near_hits
from memoryx.search.relations import TOP_HITS, names_query, someone_of_users
from memoryx.search.state import SearchState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)

MAX_RELATIONS = 200


def graph_recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    services = services_of(runtime)
    graph = services.graph
    empty = {"graph_hits": [], "graph_relations": [], "graph_entities": []}
    found = [{"id": e["id"], "name": e["name"]} for e in plan.entities]
    from_hits = plan.walk_from_hits and graph is not None and bool(state.get("keyword_hits"))
    if graph is None or not ((plan.use_graph and found) or from_hits):
        return {**empty, "graph_entities": found, "timings": {"graph_recall": elapsed_ms(start)}}
    try:
        relations = graph.neighbourhood(plan.scope, [e["id"] for e in found], depth=plan.expand_depth,
                                        relation_names=list(plan.relation_types) if plan.relation_types else None,
                                        include_invalid=plan.include_invalid, limit=MAX_RELATIONS) \
            if plan.use_graph and found else []
        if from_hits:
            relations += _named_from_hits(services, plan, state["keyword_hits"])
    except Exception as exc:  # the other paths still answer; the failure is logged
        log.warning("graph recall failed, searching without it: %s", exc)
        return {**empty, "graph_entities": found, "timings": {"graph_recall": elapsed_ms(start)}}
    best: dict[str, float] = {}
    kept: list[dict] = []
    for rel in relations:
        if not plan.include_invalid and rel.get("valid") is False:
            continue  # defence in depth: the store already hides them
        kept.append(rel)
        mid = rel.get("memory_id")
        if not mid:
            continue
        hops = rel.get("hops")
        hops = 1 if hops is None else max(1, int(hops))
        score = 1.0 / hops  # 1 / graph distance
        if score > best.get(mid, -1.0):
            best[mid] = score
    best = _follow_links(services, plan.scope, best)
    named = sorted({r["memory_id"] for r in kept if r.get("named") and r.get("memory_id")})
    hits = [{"id": mid, "score": s, "payload": {}} for mid, s in sorted(best.items(), key=lambda kv: -kv[1])]
    hits = hits[: plan.candidate_k * 2]
    kept.sort(key=lambda r: (r.get("hops") or 0))
    return {"graph_hits": hits, "graph_relations": kept, "graph_entities": found, "relation_hits": named,
            "timings": {"graph_recall": elapsed_ms(start)}}


def _named_from_hits(services, plan, keyword_hits: list[dict]) -> list[dict]:
    """Relations one hop from the entities of the best keyword hits that name one of the query's words."""
    tokens = set(plan.relation_tokens)
    if not tokens:  # the question names no relation: nothing to walk for
        return []
    around = relations_near_hits(services.sql, plan.scope, [h["id"] for h in keyword_hits[:TOP_HITS]],
                              include_invalid=plan.include_invalid, limit=MAX_RELATIONS)
    # a question about the user's own relation ("where do I live") is not answered by one of their people's
    # ("用户岳母 住在 慕尼黑"); one naming a person ("where does my mother live") is
    # ... and one asking something of a person ("what is my sister's job") is answered by a relation naming that
    # person, not by the user's own job
    person, person_cjk = tokens - set(plan.attribute_tokens), set(plan.relation_cjk) - set(plan.attribute_cjk)
    return [dict(r, named=True) for r in around if names_query(r, tokens)
            and (not plan.attribute_tokens or names_query(r, person, person_cjk))
            and (plan.people_asked or not someone_of_users(str(r.get("source") or "")))]


def _follow_links(services, scope, best: dict[str, float]) -> dict[str, float]:
    """Memory links one hop from the hits (same_topic / follows / causes links of consolidation, the
    agents' link_memories): a linked memory scores link_follow_score x the hit's score, never above a
    direct hit."""
    factor = services.settings.link_follow_score
    if not best or factor <= 0:
        return best
    try:
        links = services.sql.memory_links(list(best), limit=MAX_RELATIONS)  # one hop
    except Exception as exc:  # the direct hits still answer
        log.warning("memory links not followed: %s", exc)
        return best
    out = dict(best)
    for link in links:
        if not scope.contains(link):
            continue
        for src, dst in ((link["source_id"], link["target_id"]), (link["target_id"], link["source_id"])):
            if src in best and dst not in best:
                out[dst] = max(out.get(dst, 0.0), best[src] * factor)
    return out
