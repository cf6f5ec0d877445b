"""Search without the add side: the calls `Memory.search` and the CLI's search share, and `SearchReader`.

`SearchCalls` checks a search's input, builds the run's `Context` and publishes
`memory.accessed`; it needs only `settings` and `services`. `MemoryCore` mixes it in. `SearchReader` is what
the CLI's `memoryx search` opens instead of `Memory`: the stores and the encoder (`build_services(search_only=
True)`: the chat models built only if the search asks one, a query rewrite; the graph store opened, its
embedded server started, only by a search that walks the graph), and the search steps run by `run_search`,
without LangGraph and without the add graph, its checkpointer or its run recovery: a command's start shrinks
by seconds. Results are `Memory.search`'s (tests/api/test_search_reader.py compares them).
"""

from __future__ import annotations

from typing import Any

from memoryx.api.inputs import check_limit, scope_of_ids
from memoryx.core.events import MEMORY_ACCESSED
from memoryx.core.filters import with_alive
from memoryx.errors import InvalidInputError
from memoryx.graphs.search_steps import run_search
from memoryx.runtime.context import Context
from memoryx.runtime.services import build_services
from memoryx.search.access import flush_access
from memoryx.search.state import SearchInput
from memoryx.settings import Settings, get_settings

# what `Memory.search` takes besides the query, scope ids, limit, filters and threshold
SEARCH_OPTIONS = frozenset(SearchInput.__annotations__) - {"query", "user_id", "agent_id", "run_id", "limit", "filters",
                                                         "threshold", "rewrite", "record_access"}


def empty_result() -> dict:
    """A search's result with nothing found (a new dict each time: callers may add to its lists)."""
    return {"results": [], "relations": [], "total_count": 0}


class SearchCalls:
    """What a search needs besides running its steps. Mixed into classes holding `settings` and `services`."""

    settings: Settings
    services: Any

    def context(self, **overrides: Any) -> Context:
        s = self.settings
        values = dict(similarity_threshold=s.similarity_threshold, similar_top_k=s.similar_top_k,
                      entity_merge_threshold=s.entity_merge_threshold, review=s.review,
                      graph_enabled=self.services.graph is not None, search_mode=s.search_mode,
                      graph_expand_depth=s.graph_expand_depth, services=self.services)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Context(**values)

    def search_input(self, query, user_id, agent_id, run_id, limit, filters, threshold, extra: dict) -> dict:
        """`extra` carries the optional inputs, group_id and speaker among them."""
        scope_of_ids(user_id, agent_id, run_id, extra.get("group_id"))
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string.")
        if len(query) > self.settings.max_query_chars:
            raise InvalidInputError(f"query is {len(query)} characters; the limit is {self.settings.max_query_chars} "
                                    f"(MEMORYX_MAX_QUERY_CHARS).")
        check_limit(limit)
        if filters is not None and not isinstance(filters, dict):
            raise InvalidInputError(f"filters must be a dict, got {type(filters).__name__}.")
        if threshold is not None and not isinstance(threshold, (int, float)):
            raise InvalidInputError(f"threshold must be a number, got {threshold!r}.")
        inp = {"query": query, "user_id": user_id, "agent_id": agent_id, "run_id": run_id, "limit": limit,
               "filters": with_alive(filters), "threshold": threshold}  # expired memories stay out
        inp.update({k: v for k, v in extra.items() if v is not None})
        if not self.settings.search_record_access:
            inp["record_access"] = False
        return inp

    def searched(self, inp: dict, result: dict) -> dict:
        """memory.accessed: one event per search with hits, carrying every hit's id (batched, not one per hit)."""
        ids = [r["id"] for r in result.get("results") or [] if isinstance(r, dict) and r.get("id")]
        if ids:
            self.services.sql.events.publish(MEMORY_ACCESSED, {"memory_ids": ids, **{
                k: inp.get(k) for k in ("user_id", "agent_id", "run_id", "group_id") if inp.get(k)}})
        return result


class SearchReader(SearchCalls):
    """`Memory.search` (same arguments and result) over the stores and the encoder alone."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()
        self.services = build_services(self.settings, search_only=True)
        self._closed = False

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int = 10, filters: dict | None = None,
               threshold: float | None = None, **options: Any) -> dict:
        """See `Memory.search` for the options (mode, group_id, now, as_of, memory_types, ...)."""
        unknown = sorted(set(options) - SEARCH_OPTIONS)
        if unknown:
            raise TypeError(f"search() got unexpected keyword arguments {unknown}; it takes {sorted(SEARCH_OPTIONS)}")
        inp = self.search_input(query, user_id, agent_id, run_id, limit, filters, threshold, options)
        out = run_search(inp, self.context())
        return self.searched(inp, dict(out.get("result") or empty_result()))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        flush_access(timeout=2.0)  # queued access counts are written (the writer lingers up to 50 ms)
        self.services.close()

    def __enter__(self) -> "SearchReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
