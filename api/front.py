"""The base of the two front ends, Memory and AsyncMemory: construction from settings or a mem0 config dict,
and access to the shared synchronous core (memory_core.MemoryCore)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memoryx.api.mem0_config import settings_from_config
from memoryx.api.memory_core import MemoryCore
from memoryx.runtime.services import Services
from memoryx.settings import Settings

if TYPE_CHECKING:  # pragma: no cover
    from memoryx.api.background import InProcessConsolidation


class MemoryFront:
    """What Memory and AsyncMemory share: construction from settings/config and access to the core."""

    def __init__(self, settings: Settings | dict | None = None, *, llm=None, extraction_llm=None, judgment_llm=None,
                 graph_llm=None, embeddings=None, services=None, vision_llm=None, **overrides: Any):
        self._core = MemoryCore(settings, llm=llm, extraction_llm=extraction_llm, judgment_llm=judgment_llm,
                                graph_llm=graph_llm, embeddings=embeddings, services=services, vision_llm=vision_llm,
                                **overrides)
        # settings.consolidate_in_process: passes in a background thread, stopped by close()
        if self._core.settings.consolidate_in_process:
            from memoryx.api.background import start_in_process  # the consolidate graph loads only when used

            self._core.scheduler = start_in_process(self._core)

    @property
    def scheduler(self) -> "InProcessConsolidation | None":
        """The in-process consolidation thread (settings.consolidate_in_process), or None."""
        return self._core.scheduler

    @classmethod
    def from_config(cls, config: dict, **kwargs: Any):
        return cls(settings_from_config(config), **kwargs)

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def services(self) -> Services:
        return self._core.services
