"""analyze_query: the first node of the search graph. No model is called by default.

It checks the input (ScopeError / InvalidInputError before any store is read) and writes the `SearchPlan`
(memoryx.search.plan) every later node reads: the scope, the parsed filters, the query's keyword tokens,
the strings that could name an entity, the names and the period it mentions (memoryx.search.query,
memoryx.search.dates), whether it asks "when", and the recipe picked by `mode` (else MEMORYX_SEARCH_MODE)
with its graph depth (memoryx.search.recipes).

An optional model step rewrites the query (and lists extra entity names / keywords) when the input says
``rewrite: true`` or MEMORYX_SEARCH_REWRITE is on; a model failure falls back to the plain query.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from langgraph.runtime import Runtime

from memoryx.context import Context, context_of, services_of
from memoryx.filters import And, parse_filters
from memoryx.lifecycle.state import visible_filter
from memoryx.nodes.add_common import elapsed_ms
from memoryx.prompts.search import QueryRewrite
from memoryx.scope import Scope
from memoryx.search.dates import asks_when, time_window
from memoryx.search.plan import (SearchPlan, checked_depth, checked_limit, checked_relation_types,
                                 checked_threshold)
from memoryx.search.query import entity_candidates, normalize_query, proper_names, rewrite_query
from memoryx.search.recipes import recipe_named
from memoryx.search.rerankers import reranker_spec
from memoryx.search.state import SearchState
from memoryx.search.tuning import tuning
from memoryx.text import tokenize

log = logging.getLogger(__name__)


def with_status(node, include_archived: bool, include_staged: bool):
    status = visible_filter(include_archived, include_staged)
    if status is None:
        return node
    return status if node is None else And((node, status))


def analyze_query(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    # ScopeError first: a search without a scope is always refused
    scope = Scope(user_id=state.get("user_id") or None, agent_id=state.get("agent_id") or None,
                  run_id=state.get("run_id") or None)
    base = SearchPlan(
        scope=scope,
        limit=checked_limit(state.get("limit")),
        # InvalidInputError naming a bad operator; merged/archived memories stay out (issue 10)
        filters=with_status(parse_filters(state.get("filters")), bool(state.get("include_archived")),
                            services_of(runtime).settings.search_staged),
        threshold=checked_threshold(state.get("threshold")),
        relation_types=checked_relation_types(state.get("relation_types")),
        include_invalid=bool(state.get("include_invalid")),
        record_access=bool(state.get("record_access", True)),
    )
    query = normalize_query(state.get("query"))
    if not query:
        return {"plan": base, "timings": {"analyze_query": elapsed_ms(start)}}

    services = services_of(runtime)
    ctx = context_of(runtime)
    settings = services.settings
    recipe = recipe_named(state.get("mode") or ctx.search_mode)
    depth = recipe.depth_for(query, requested=checked_depth(state.get("expand_depth")),
                             configured=ctx.graph_expand_depth)

    rewritten = QueryRewrite()
    if state.get("rewrite") or settings.search_rewrite:
        try:
            rewritten = rewrite_query(services.extraction_llm, query)
        except Exception as exc:  # the plain query still works
            log.warning("query rewriting failed, searching with the plain query: %s", exc)

    keyword_query = " ".join([rewritten.query or query, *rewritten.keywords])
    window = time_window(query)
    plan = replace(
        base,
        query=query,
        semantic_query=rewritten.query or query,
        keyword_query=keyword_query,
        tokens=tuple(tokenize(keyword_query)),
        # the entity lookup itself runs in graph_recall, in parallel with the query embedding
        entity_candidates=tuple(entity_candidates(query) + rewritten.entities),
        names=tuple(proper_names(query)),
        time_window=window,
        asks_when=asks_when(query),
        rewritten=not rewritten.empty,
        recipe=recipe,
        expand_depth=depth,
        use_graph=services.graph is not None and ctx.graph_enabled and depth > 0,
        tuning=tuning(settings),
        fusion=settings.fusion,
        rrf_k=settings.rrf_k,
        reranker=reranker_spec(settings.reranker),
    )
    return {"plan": plan, "timings": {"analyze_query": elapsed_ms(start)}}
