"""The search plan: everything one search does, decided once by analyze_query and read by every later node.

The plan is derived from the input, the settings and the recipe (memoryx.search.recipes); the nodes after
analyze_query read it instead of the raw input, so the scope, the filters and the knobs are checked and
derived exactly once. A plan with an empty `query` means "nothing to search": the graph goes straight to
an empty result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from memoryx.core.filters import FilterNode
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.search.recipes import AUTO, MAX_DEPTH, RecallPath, SearchRecipe
from memoryx.search.tuning import SearchTuning

if TYPE_CHECKING:
    from memoryx.search.reads import Timeline

MAX_LIMIT = 1000
DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class SearchPlan:
    scope: Scope
    limit: int = DEFAULT_LIMIT
    query: str = ""  # normalised (NFKC, single spaces); "" = nothing to search
    filters: FilterNode | None = None  # parsed once; pushed down to the stores, re-checked on the SQL rows
    threshold: float | None = None
    relation_types: tuple[str, ...] | None = None  # graph walk restricted to these relation names
    include_invalid: bool = False  # show invalidated relations too
    record_access: bool = True  # count the returned memories as accessed (background)
    # the time the question is asked at (epoch seconds): relative periods, "now/currently" and recency are read
    # from it; None = the clock at search time (a replayed log's latest event for relative periods)
    now: float | None = None

    # what the query says
    semantic_query: str = ""  # embedded by the dense paths (the rewritten query when rewriting is on)
    keyword_query: str = ""  # searched by BM25 (plus the rewrite's extra keywords)
    # other words for the relation a question about the user names (memoryx.search.relation_terms), searched by
    # BM25 beside keyword_query at half weight
    keyword_extra: str = ""
    tokens: tuple[str, ...] = ()  # keyword tokens (memoryx.core.text.tokenize); none: the keyword path is skipped
    entities: tuple[dict, ...] = ()  # [{"id", "name"}] the scope's entities the query names (exact, normalised)
    time_window: tuple[float, float] | None = None  # [start, end) epoch seconds of the period the query names
    period_text: str = ""  # the words the period was read from ("last summer")
    # the query's period filters the ranking (MEMORYX_QUERY_TIME_FILTER, memoryx.search.periods):
    # "auto" puts the in-period hits first and tops up below, "strict" keeps only them (unless there are none)
    period_filter: Literal["auto", "strict"] | None = None
    time_range: tuple[float, float] | None = None  # the caller's range (a hard filter, in `filters`)
    asks_when: bool = False
    asks_name: bool = False  # "what's my dog's name": of the memories stating the relation, the one giving a name
    preferences: bool = False  # asks for a recommendation: the preference path runs (memoryx.search.preferences)
    current: bool = False  # about how things stand now: the latest fact first (memoryx.search.current)
    # the encoder reads the query's script (not a Chinese or Japanese query with the English MiniLM): the dense path
    # weighs `weight_dense` in fusion, else `weight_dense_unread`
    encoder_reads_query: bool = True
    # the scope holds multilingual vectors (memoryx.stores.vectors.multilingual): dense_recall reads that index too
    multilingual: bool = False
    now_topic: tuple[str, ...] = ()  # what a question saying "now" asks about (memoryx.search.current.now_topic)
    role: str | None = None  # whose turns answer it: "user" / "assistant" (memoryx.search.speakers)
    aggregate: bool = False  # gathered across sessions ("how many", "in total"): hits spread (memoryx.search.spread)
    amount: bool = False  # asks for a number ("how much", "the total"): figures gain (memoryx.search.amounts)
    food: bool = False  # a recommendation about food: what the user eats or cannot is the preference that answers
    # the relation the question names, in the words that state it (memoryx.search.relations): keyword tokens
    # ("job", "work", ...) and CJK words (狗, 犬); read by the graph walk and the ranking. Tuples, as every
    # collection of the plan: the graph's state is streamed as JSON (LangServe)
    relation_tokens: tuple[str, ...] = ()
    relation_cjk: tuple[str, ...] = ()
    current_value: bool = False  # asks what it is now ("what's my job"): an ended relation does not answer it
    # asks whether something still holds ("do I still go to the gym"): a memory saying it ended states it too, and
    # the newest statement comes first (memoryx.search.current.asks_still)
    still: bool = False
    # names one relation of the user that holds one value at a time ("where do I live", not "what does my husband
    # do" nor "how old is my son"): of the memories stating it, the latest stands (memoryx.search.current)
    one_relation: bool = False
    people_asked: bool = False  # names one of the user's people or pets ("my mother"), not only the user's own relation
    # what the question asks of that person ("my son's birthday": birthday, 誕生日 ...): a memory stating the
    # relation gains `attribute_bonus` when it also says this (memoryx.search.relation_terms.attribute_words)
    attribute_tokens: tuple[str, ...] = ()
    attribute_cjk: tuple[str, ...] = ()
    rewritten: bool = False  # a model rewrote the query
    # the scope's live memories read with the query analysis (memoryx.search.reads): the candidates' context
    # window comes from it; None (a large scope): expand_context reads the window itself
    timeline: Timeline | None = None

    # how it is searched
    recipe: SearchRecipe = AUTO
    expand_depth: int = 0
    use_graph: bool = False  # the graph path walks (depth > 0, a graph store, graph enabled, entities named)
    # a question about the user's life also walks from its best keyword hits (memoryx.search.relations)
    walk_from_hits: bool = False
    tuning: SearchTuning = field(default_factory=SearchTuning)
    fusion: Literal["rrf", "weighted"] = "weighted"
    rrf_k: int = 60
    reranker: str | None = None  # reranker spec (memoryx.search.rerankers); None: no rerank step

    @property
    def empty(self) -> bool:
        return not self.query

    def uses(self, path: RecallPath) -> bool:
        return self.recipe.uses(path)

    @property
    def candidate_k(self) -> int:
        """Hits asked of each recall path."""
        return max(int(self.tuning.candidate_k), 2 * self.limit)


# ------------------------------------------------------------------------------------- input checks


def checked_limit(limit: Any) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be an integer between 1 and {MAX_LIMIT}, got {limit!r}")
    return limit


def checked_threshold(threshold: Any) -> float | None:
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise InvalidInputError(f"threshold must be a number, got {threshold!r}")
    return None if threshold is None else float(threshold)


def checked_relation_types(relation_types: Any) -> tuple[str, ...] | None:
    if relation_types is None:
        return None
    if not isinstance(relation_types, list) or not all(isinstance(r, str) and r.strip() for r in relation_types):
        raise InvalidInputError(f"relation_types must be a list of relation names, got {relation_types!r}")
    return tuple(relation_types) or None


def checked_memory_types(memory_types: Any) -> tuple[str, ...] | None:
    if memory_types is None:
        return None
    if isinstance(memory_types, str):
        memory_types = [memory_types]
    if not isinstance(memory_types, (list, tuple)) or not all(isinstance(t, str) and t.strip() for t in memory_types):
        raise InvalidInputError(f"memory_types must be a list of memory type names, got {memory_types!r}")
    return tuple(t.strip() for t in memory_types) or None


def checked_depth(expand_depth: Any) -> int | None:
    if expand_depth is not None and (isinstance(expand_depth, bool) or not isinstance(expand_depth, int)
                                     or not 0 <= expand_depth <= MAX_DEPTH):
        raise InvalidInputError(f"expand_depth must be 0, 1 or 2; got {expand_depth!r}")
    return expand_depth
