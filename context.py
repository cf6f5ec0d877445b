"""Run-time context of the MemoryX graphs (LangGraph `Runtime[Context]`).

Fields carry descriptions so LangGraph Studio can show them. `services` holds the live stores and models;
when it is None (as under `langgraph dev`) nodes use the process-wide services built from MEMORYX_ settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime

from memoryx.settings import Settings, get_settings

if TYPE_CHECKING:
    from memoryx.services import Services


def _setting(name: str):
    return field(default_factory=lambda: getattr(get_settings(), name), metadata={"description": Settings.model_fields[name].description})


@dataclass(kw_only=True)
class Context:
    similarity_threshold: float = _setting("similarity_threshold")
    similar_top_k: int = _setting("similar_top_k")
    entity_merge_threshold: float = _setting("entity_merge_threshold")
    review: bool = _setting("review")
    graph_enabled: bool = field(default=True, metadata={"description": "Extract entities and relations into the knowledge graph (needs a graph backend)."})
    search_mode: str = _setting("search_mode")
    graph_expand_depth: int = _setting("graph_expand_depth")
    services: Any = field(default=None, metadata={"description": "Live stores and models (memoryx.services.Services). None: built from MEMORYX_ settings."})


def services_of(runtime: Runtime[Context] | None) -> "Services":
    """The Services of this run: the injected ones, else the process-wide defaults."""
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    if ctx is not None and getattr(ctx, "services", None) is not None:
        return ctx.services
    from memoryx.services import get_default_services

    return get_default_services()


def context_of(runtime: Runtime[Context] | None) -> Context:
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    return ctx if isinstance(ctx, Context) else Context()
