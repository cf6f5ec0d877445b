"""MemoryX: long-term memory for LLM chatbots and agents, built as LangGraph workflows.

    from memoryx import Memory
    with Memory() as m:
        m.add("I live in Berlin", user_id="alice")
        m.search("where does alice live?", user_id="alice")
"""

from memoryx.errors import (
    ConcurrencyError,
    InvalidInputError,
    MemoryXError,
    ModelOutputError,
    NotFoundError,
    ScopeError,
    StoreUnavailableError,
)
from memoryx.settings import Settings, get_settings

__all__ = [
    "AsyncMemory",
    "ConcurrencyError",
    "InvalidInputError",
    "Memory",
    "MemoryXError",
    "MemoryXStore",
    "ModelOutputError",
    "NotFoundError",
    "ScopeError",
    "Settings",
    "StoreUnavailableError",
    "get_settings",
]


def __getattr__(name: str):
    # Imported lazily: `import memoryx` must stay cheap (the CLI's --help, settings access) and must not
    # pull in torch or start any store.
    if name in ("Memory", "AsyncMemory"):
        from memoryx.api import memory

        return getattr(memory, name)
    if name == "MemoryXStore":  # LangGraph's BaseStore over Memory (memoryx.api.langgraph_store)
        from memoryx.api.langgraph_store import MemoryXStore

        return MemoryXStore
    raise AttributeError(f"module 'memoryx' has no attribute {name!r}")
