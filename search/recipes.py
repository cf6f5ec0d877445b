"""Named search recipes: which recall paths a search runs and how far it walks the graph.

A recipe is data, picked by name (the `mode` input of a search, else MEMORYX_SEARCH_MODE); the planner
(nodes/analyze_query.py) turns it into a `SearchPlan`. Fusion, boosts, context propagation and reranking
apply to every recipe (they are settings and MEMORYX_SEARCH_TUNING knobs).

    fast     dense + keyword + period paths, no graph walk
    deep     every path, graph walked 2 hops from the entities the query names (an explicit depth wins)
    auto     every path; the graph is walked MEMORYX_GRAPH_EXPAND_DEPTH hops (default 1) when the query names
             known entities, 2 hops for causal / relational questions ("why ...", "为什么", "なぜ");
             an explicit depth wins (the default recipe)
    hybrid   dense + keyword only: the plain hybrid baseline
    vector   dense only
    keyword  keyword (BM25) only

`expand_depth` counts hops from the entities named in the query: 0 = no graph path, 1 = the relations of those
entities, 2 = plus the relations of the entities they reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memoryx.core import lexicon
from memoryx.errors import InvalidInputError

RecallPath = Literal["dense", "keyword", "graph", "time"]
RecipeName = Literal["fast", "deep", "auto", "hybrid", "vector", "keyword"]
MAX_DEPTH = 2

_CAUSAL = lexicon.matcher("search.causal")  # why, because, related, 为什么, 原因, なぜ, 関係


def asks_why(query: str) -> bool:
    """A causal or relational question: the answer is likely two relations away."""
    return _CAUSAL.contains(query)


@dataclass(frozen=True)
class SearchRecipe:
    name: RecipeName
    paths: tuple[RecallPath, ...]  # a tuple, not a set: the plan travels in LangServe's JSON stream
    expand_depth: int | None  # None: the configured depth (MEMORYX_GRAPH_EXPAND_DEPTH)
    requested_depth_wins: bool = False  # an `expand_depth` input replaces the recipe's
    deeper_for_why: bool = False  # causal / relational questions walk MAX_DEPTH hops

    def uses(self, path: RecallPath) -> bool:
        return path in self.paths

    def depth_for(self, query: str, *, requested: int | None, configured: int) -> int:
        """Hops of the graph walk for this query (0 when the recipe has no graph path)."""
        if not self.uses("graph"):
            return 0
        if requested is not None and self.requested_depth_wins:
            return requested
        depth = configured if self.expand_depth is None else self.expand_depth
        if self.deeper_for_why and depth > 0 and asks_why(query):
            depth = MAX_DEPTH
        return max(0, min(MAX_DEPTH, int(depth)))


_ALL: tuple[RecallPath, ...] = ("dense", "keyword", "graph", "time")

FAST = SearchRecipe("fast", ("dense", "keyword", "time"), expand_depth=0)
DEEP = SearchRecipe("deep", _ALL, expand_depth=MAX_DEPTH, requested_depth_wins=True)
AUTO = SearchRecipe("auto", _ALL, expand_depth=None, requested_depth_wins=True, deeper_for_why=True)
HYBRID = SearchRecipe("hybrid", ("dense", "keyword"), expand_depth=0)
VECTOR_ONLY = SearchRecipe("vector", ("dense",), expand_depth=0)
KEYWORD_ONLY = SearchRecipe("keyword", ("keyword",), expand_depth=0)

RECIPES: dict[str, SearchRecipe] = {r.name: r for r in (FAST, DEEP, AUTO, HYBRID, VECTOR_ONLY, KEYWORD_ONLY)}


def recipe_named(name: str) -> SearchRecipe:
    recipe = RECIPES.get(name.lower()) if isinstance(name, str) else None
    if recipe is None:
        raise InvalidInputError(f"mode must be one of {', '.join(RECIPES)}; got {name!r}")
    return recipe
