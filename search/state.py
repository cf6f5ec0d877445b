"""State of the search graph (memoryx.graphs.search). TypedDicts from typing_extensions (LangServe + pydantic
on Python 3.11 need it).

Input keys are what a caller passes; analyze_query turns them into one `SearchPlan` that every later node
reads; each recall path writes its own key, so the parallel branches never conflict.
"""

from __future__ import annotations

import operator
from typing import Any

from typing_extensions import Annotated, NotRequired, TypedDict

from memoryx.search.plan import SearchPlan
from memoryx.search.query_vectors import QueryVectors


class SearchInput(TypedDict):
    query: str
    user_id: NotRequired[str | None]
    group_id: NotRequired[str | None]  # a group chat
    speaker: NotRequired[str | None]  # only what this participant said (metadata.speaker)
    agent_id: NotRequired[str | None]
    run_id: NotRequired[str | None]
    limit: NotRequired[int]
    filters: NotRequired[dict | None]
    threshold: NotRequired[float | None]
    mode: NotRequired[str | None]  # a recipe name: fast | deep | auto | hybrid | vector | keyword
    expand_depth: NotRequired[int | None]
    relation_types: NotRequired[list[str] | None]
    include_invalid: NotRequired[bool]
    rewrite: NotRequired[bool]  # optional model step rewriting the query (also MEMORYX_SEARCH_REWRITE)
    record_access: NotRequired[bool]  # default True: count the returned memories as accessed (background)
    include_archived: NotRequired[bool]  # archived and merged memories too (default False)
    # only memories whose event happened in [start, end): (start, end) ISO / epoch, {"start", "end"} or a period
    # in words ("last summer", "上个月"); memoryx.search.dates.checked_time_range
    time_range: NotRequired[Any]
    # a confident period the query names filters: "auto" (top-up below), "strict", "off" (ranking signal only);
    # default MEMORYX_QUERY_TIME_FILTER
    query_time_filter: NotRequired[str | None]
    # the time the question is asked at (ISO / datetime / epoch); `as_of` also leaves out later events
    now: NotRequired[Any]
    as_of: NotRequired[Any]
    memory_types: NotRequired[list[str] | None]  # only memories of these types


class SearchOutput(TypedDict):
    result: dict


class SearchState(SearchInput, total=False):
    plan: SearchPlan  # scope, filters, query analysis, recipe and knobs, derived once
    # what the dense paths embed, started once by analyze_query (memoryx.search.query_vectors); absent when the
    # search embeds nothing
    query_vectors: QueryVectors
    dense_hits: list[dict]  # [{"id", "score", "payload"}] best first
    keyword_hits: list[dict]
    graph_hits: list[dict]
    graph_relations: list[dict]
    relation_hits: list[str]  # memories stating the relation the question names (memoryx.search.relations)
    graph_entities: list[dict]  # [{"id", "name"}] entities of the scope named in the query
    preference_hits: list[dict]  # keyword hits of the query with the preference vocabulary
    time_hits: list[dict]  # dense hits inside the period the query names
    # the multilingual index (memoryx.stores.vectors.multilingual): memories in another script than the query's,
    # and, for a query the main encoder cannot read, those in its own
    crosslingual_hits: list[dict]
    multilingual_hits: list[dict]
    timings: Annotated[dict, operator.or_]  # per-node milliseconds (parallel paths merge)
    result: dict


class RankState(SearchState, total=False):
    """What the rank node's stages (nodes/rank.py) pass to each other, beside the graph's state. Not channels
    of the graph: only `result` leaves the node, and every channel costs each graph run its creation and
    bookkeeping."""

    fused: list[dict]
    candidates: list[dict]  # fused + SQL rows + boosts + neighbouring context, best first
    ranked: list[dict]  # final scores, thresholded (reranked when the plan names a reranker)
