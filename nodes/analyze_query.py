"""analyze_query: the first node of the search graph. No model is called by default.

It checks the input (ScopeError / InvalidInputError before any store is read) and writes the `SearchPlan`
(memoryx.search.plan) every later node reads: the scope, the parsed filters, the query's keyword tokens,
the strings that could name an entity, the names and the period it mentions (memoryx.search.query,
memoryx.search.dates), whether it asks "when", and the recipe picked by `mode` (else MEMORYX_SEARCH_MODE)
with its graph depth (memoryx.search.recipes).

When the dense path will embed the query, its embedding starts here, once, as soon as the text is known (in the
read transaction, once the user's own names are read): every encoder that reads it (MiniLM, and the multilingual
one when the scope holds Chinese or Japanese), each on a worker thread (memoryx.search.query_vectors.start), so
that they overlap the rest of the search up to dense_recall, which reads the vectors from the state's
`query_vectors`.

An optional model step rewrites the query (and lists extra entity names / keywords) when the input says
``rewrite: true`` or MEMORYX_SEARCH_REWRITE is on; a model failure falls back to the plain query.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from memoryx.core.filters import And, Cond, event_time_range, parse_filters, with_speaker
from memoryx.core.runs import elapsed_ms
from memoryx.core.scope import Scope
from memoryx.core.text import tokenize
from memoryx.knowledge.profiles import user_subject
from memoryx.lifecycle.state import visible_filter
from memoryx.nodes.dense_recall import wants_vector
from memoryx.prompts.search import QueryRewrite
from memoryx.runtime.context import Context, context_of, services_of
from memoryx.search import query_vectors
from memoryx.search.amounts import asks_amount
from memoryx.search.current import asks_current, asks_current_value, asks_still, now_topic
from memoryx.search.dates import (
    asks_when,
    checked_reference_time,
    checked_time_filter,
    checked_time_range,
    query_period,
)
from memoryx.search.plan import (
    SearchPlan,
    checked_depth,
    checked_limit,
    checked_memory_types,
    checked_relation_types,
    checked_threshold,
)
from memoryx.search.preferences import asks_food, asks_recommendation
from memoryx.search.query import (
    as_first_person,
    english_encoder,
    entity_candidates,
    normalize_query,
    resolve_self_names,
    rewrite_query,
    without_cjk_question_words,
    without_recall_request,
    written_in_cjk,
)
from memoryx.search.query_vectors import QueryVectors
from memoryx.search.reads import scope_facts
from memoryx.search.recipes import recipe_named
from memoryx.search.relation_terms import (
    ONE_AT_A_TIME,
    PEOPLE,
    attribute_words,
    named_relations,
    relation_keywords,
    relation_words,
    without_job_idiom,
)
from memoryx.search.relations import asks_name, cjk_relation
from memoryx.search.rerankers import reranker_spec
from memoryx.search.speakers import asked_role
from memoryx.search.spread import asks_aggregate
from memoryx.search.state import SearchState
from memoryx.search.time_words import time_keywords
from memoryx.search.tuning import tuning

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)


def with_status(node, include_archived: bool, include_staged: bool):
    status = visible_filter(include_archived, include_staged)
    if status is None:
        return node
    return status if node is None else And((node, status))


def with_period(node, period: tuple[float, float] | None):
    """A period as a hard filter on the event time (valid_at, else created_at): a caller's time range
    (time_range / REST start, end), or a period the query names with confidence (query_time_filter). Any period
    the query names is also a recall path and a ranking bonus (dense_recall, expand_context)."""
    if period is None:
        return node
    rng = event_time_range(*period)
    return rng if node is None else And((node, rng))


def with_types(node, memory_types: tuple[str, ...] | None):
    """Only memories of `memory_types` (pushed down to the stores like any filter)."""
    if not memory_types:
        return node
    cond = Cond("memory_type", "in", memory_types)
    return cond if node is None else And((node, cond))


def profile_subject(services, scope: Scope) -> str | None:
    """The profile whose name and aliases are read as the user: the scope's user's; none in a group
    scope, whose facts name their speakers."""
    if not scope.user_id or scope.group_id or not services.settings.profiles:
        return None

    return user_subject(scope.user_id)


REPLAY_LAG = timedelta(days=1)


def replayed(latest: tuple[datetime, datetime] | None) -> bool:
    """The scope is a replayed chat log: its newest event was written down more than a day after it happened.
    `latest`: (valid_at, created_at) of the scope's latest event (memoryx.search.reads)."""
    return latest is not None and latest[1] - latest[0] > REPLAY_LAG


def present_of(latest: tuple[datetime, datetime] | None) -> datetime:
    """The "now" query periods are read from: the wall clock, except for a replayed chat log: then
    the time of its latest event, so "in July" / "last year" mean the log's July and year."""
    now = datetime.now(timezone.utc)
    if not replayed(latest):
        return now
    return min(latest[0], now)


def scope_present(services, scope: Scope) -> datetime:
    """present_of the scope's latest event, read from the system of record."""
    return present_of(scope_facts(services.sql, scope, profile_subject=None, entity_names=lambda own: []).latest_event)


def holds_multilingual(services, scope) -> bool:
    """The scope holds memories of an owner who writes Chinese or Japanese (an existence check, then a count;
    False without the index)."""
    index = getattr(getattr(services, "vectors", None), "multilingual", None)
    return index is not None and index.holds(scope)


def analyze_query(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    # ScopeError first: a search without a scope is always refused
    scope = Scope(user_id=state.get("user_id") or None, agent_id=state.get("agent_id") or None,
                  run_id=state.get("run_id") or None, group_id=state.get("group_id") or None)
    reference, hide_later = checked_reference_time(state.get("now"), state.get("as_of"))
    time_range = checked_time_range(state.get("time_range"), reference)
    # as_of: the memory as it stood then - events after it are left out (a hard filter, like a time range)
    until = (-1e11, reference.timestamp() + 1e-3) if hide_later else None
    base = SearchPlan(
        scope=scope,
        limit=checked_limit(state.get("limit")),
        time_range=time_range,
        # InvalidInputError naming a bad operator; merged/archived memories stay out
        filters=with_period(with_period(with_types(
            with_status(parse_filters(with_speaker(state.get("filters"), state.get("speaker"))),
                        bool(state.get("include_archived")), services_of(runtime).settings.search_staged),
            checked_memory_types(state.get("memory_types"))), time_range), until),
        threshold=checked_threshold(state.get("threshold")),
        relation_types=checked_relation_types(state.get("relation_types")),
        include_invalid=bool(state.get("include_invalid")),
        record_access=bool(state.get("record_access", True)),
        now=reference.timestamp() if reference is not None else None,
    )
    query = without_recall_request(normalize_query(state.get("query")))
    if not query:
        return {"plan": base, "timings": {"analyze_query": elapsed_ms(start)}}

    services = services_of(runtime)
    ctx = context_of(runtime)
    settings = services.settings
    recipe = recipe_named(state.get("mode") or ctx.search_mode)
    depth = recipe.depth_for(query, requested=checked_depth(state.get("expand_depth")),
                             configured=ctx.graph_expand_depth)

    rewriting = bool(state.get("rewrite") or settings.search_rewrite)
    rewritten = QueryRewrite()
    if rewriting:
        try:
            rewritten = rewrite_query(services.extraction_llm, query)
        except Exception as exc:  # the plain query still works
            log.warning("query rewriting failed, searching with the plain query: %s", exc)

    # the user's own names (their profile's name and aliases) are read as the user ("User"/"用户");
    # the names, the scope's timeline (its latest event; the context window expand_context takes) and the scope's
    # entities named in the query: one read transaction. The text the dense paths embed is known once the names
    # are (its first statement): a dense recipe starts the encoders then, so that they run while the rest of the
    # read, of the analysis, and the keyword and graph paths do (memoryx.search.query_vectors)
    vectors: QueryVectors | None = None

    def candidates(own: tuple[str, ...]) -> list[str]:
        nonlocal vectors
        if recipe.uses("dense"):
            vectors = query_vectors.start(services, resolve_self_names(rewritten.query or query, list(own))[0],
                                          multilingual=lambda: holds_multilingual(services, scope))
        return entity_candidates(resolve_self_names(query, list(own))[0]) + list(rewritten.entities)

    facts = scope_facts(services.sql, scope, profile_subject=profile_subject(services, scope),
                        entity_names=candidates)
    semantic, own = resolve_self_names(rewritten.query or query, list(facts.own_names))
    period = query_period(query, reference or present_of(facts.latest_event))
    # a confident period the query names filters the ranking (unless the caller's own range filters). A period
    # read from a replayed log's present ("last summer" of a log that ended in 2023) is a guess: it only ranks
    period_filter = None
    if (period is not None and period.confident and time_range is None
            and not (period.relative and reference is None and replayed(facts.latest_event))):
        mode = checked_time_filter(state.get("query_time_filter") or settings.query_time_filter)
        period_filter = None if mode == "off" else mode
    searched = replace(base, query=query, semantic_query=semantic, recipe=recipe,
                       time_window=period.window if period is not None else None, period_filter=period_filter)
    if vectors is None and wants_vector(searched):  # a recipe without the dense path: a named period's list
        vectors = query_vectors.start(services, semantic, multilingual=lambda: False)
    searched = replace(searched, multilingual=vectors is not None and vectors.multilingual)
    # a question naming the user by their own name ("Where does Alice live?") is read as "Where do I live?"
    asked = as_first_person(query, own) if own else query
    role = asked_role(asked)
    # a question that names a relation of the user ("my job", 我的狗) or of someone it names ("What does Alex do?",
    # "Where does Marta live?") also searches the relation's other words, in the three languages: the memory may
    # say it differently ("I work as", "User's dog", "Alex is a nurse, she works nights")
    # ... and so does one naming a weekday or a time of day ("on Fridays": 金曜, 星期五), habits being told with them
    keyword_extra = " ".join(relation_keywords(asked, people=role != "user") + time_keywords(query))
    # "for a living", "how old am I": what the question asks, not words a memory shares ("lives in", "old")
    keyword_query = " ".join([without_cjk_question_words(without_job_idiom(semantic)),
                              *rewritten.keywords])
    relation_tokens, relation_cjk = relation_words(asked), cjk_relation(asked)
    relations = named_relations(asked)
    attribute_tokens, attribute_cjk = attribute_words(relations)
    recommendation = asks_recommendation(query)
    # (a name does not change with time: "what's my husband's name" is not answered by the newest memory)
    current = asks_current(asked, names_relation=bool(relation_tokens or relation_cjk)) and not asks_when(query) \
        and not asks_name(asked)
    plan = replace(
        searched,
        keyword_query=keyword_query,
        keyword_extra=keyword_extra,
        tokens=tuple(tokenize(f"{keyword_query} {keyword_extra}")),
        entities=facts.entities,
        timeline=facts.timeline,
        period_text=period.text if period is not None else "",
        asks_when=asks_when(query),
        asks_name=asks_name(asked),
        aggregate=asks_aggregate(query),
        amount=asks_amount(query),
        role=role,
        relation_tokens=tuple(sorted(relation_tokens)),
        relation_cjk=tuple(sorted(relation_cjk)),
        # a name or an age does not end: "I'm 67 and retired" still says who the user is and how old
        current_value=asks_current_value(asked),
        one_relation=role == "user" and len(relations) == 1 and relations[0] in ONE_AT_A_TIME,
        still=asks_still(asked),
        people_asked=any(r in PEOPLE for r in relations),
        attribute_tokens=tuple(sorted(attribute_tokens)),
        attribute_cjk=tuple(sorted(attribute_cjk)),
        preferences=recommendation,
        food=recommendation and asks_food(query),
        current=current,
        encoder_reads_query=not (english_encoder(settings.embedding_model) and written_in_cjk(query)),
        now_topic=now_topic(asked, tuple(tokenize(without_cjk_question_words(asked)))) if current else (),
        rewritten=not rewritten.empty,
        expand_depth=depth,
        # the graph is walked only from entities the query names: none found, no graph round trip
        use_graph=services.graph is not None and ctx.graph_enabled and depth > 0 and bool(facts.entities),
        walk_from_hits=(services.graph is not None and ctx.graph_enabled and depth > 0 and role == "user"),
        tuning=tuning(settings),
        fusion=settings.fusion,
        rrf_k=settings.rrf_k,
        reranker=reranker_spec(settings.reranker),
    )
    out = {"plan": plan, "timings": {"analyze_query": elapsed_ms(start)}}
    if vectors is not None:
        out["query_vectors"] = vectors
    return out
