"""How much work one request may ask for: the caps every door applies before a store is read, each refused
with an InvalidInputError (a 422) that names the limit and what to send instead.

Why these and not the body size alone (MEMORYX_MAX_REQUEST_BYTES): a small body can ask for a lot. A mem0
filter naming 50 agent ids and 50 run ids is 2,500 scopes, each read on its own (755 bytes: seconds of a
worker); a list of a million ids, a filter nested a thousand deep, a page a million pages down are all a few
kilobytes. The values are far above what an application asks for in one call (docs/security.md lists them).
"""

from __future__ import annotations

from memoryx.errors import InvalidInputError

MAX_SCOPES = 100  # scopes one request reaches: users x agents x runs named in a body or filter
MAX_FILTER_VALUES = 1000  # values in one in / nin list of a filter
MAX_FILTER_DEPTH = 8  # AND / OR / NOT nested in a filter
MAX_FILTER_CONDITIONS = 200  # conditions (field op value) in one filter
MAX_PAGE_WINDOW = 10_000  # rows before the end of a requested page (page x page_size)

__all__ = ["MAX_FILTER_CONDITIONS", "MAX_FILTER_DEPTH", "MAX_FILTER_VALUES", "MAX_PAGE_WINDOW", "MAX_SCOPES",
           "check_page", "check_scopes"]


def check_scopes(count: int, what: str = "the ids named") -> None:
    """Refuse a request that fans out to more than MAX_SCOPES scopes."""
    if count > MAX_SCOPES:
        raise InvalidInputError(f"{what} make {count} scopes (users x agents x runs), each read on its own; the "
                                f"limit is {MAX_SCOPES} scopes per request. Name fewer ids per call, or leave "
                                "agent_id / run_id out to read the user's whole scope at once and filter the answer.")


def check_page(page: int, page_size: int) -> None:
    """Refuse a page whose last row lies beyond MAX_PAGE_WINDOW."""
    if page * page_size > MAX_PAGE_WINDOW:
        raise InvalidInputError(f"page {page} of page_size {page_size} ends at row {page * page_size}; the limit is "
                                f"row {MAX_PAGE_WINDOW} (page x page_size). Narrow the filter to reach older rows.")
