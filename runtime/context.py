"""Run-time context of the MemoryX graphs (LangGraph `Runtime[Context]`).

Fields carry descriptions so LangGraph Studio can show them. `services` holds the live stores and models:
`Memory`, the server and the tests inject theirs. Only a graph served with none (`langgraph dev`) gets the
serving process's own, `memoryx.runtime.services.serving_services()`: `services_of` builds it on first use inside a
node, off the server's event loop (building it as the field's default would block the loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from pydantic import InstanceOf, WithJsonSchema

from memoryx.runtime.services import Services, serving_services
from memoryx.settings import Settings, get_settings

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


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
    # Studio draws the context from its JSON schema: live objects have none, so the field shows as an object
    services: Annotated[InstanceOf[Services] | None, WithJsonSchema({"type": "object"})] = field(default=None, metadata={"description": "Live stores and models (memoryx.runtime.services.Services). Not given: the serving process's own, built from MEMORYX_ settings."})


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context; a run started without one (langgraph dev) gets the declared defaults."""
    ctx = runtime.context if runtime is not None else None
    return ctx if isinstance(ctx, Context) else Context()


def services_of(runtime: Runtime[Context] | None) -> Services:
    """The Services of this run: the injected ones, else (a served graph) the serving process's own."""
    services = context_of(runtime).services
    return services if services is not None else serving_services()
