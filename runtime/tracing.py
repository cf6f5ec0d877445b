"""Optional OpenTelemetry traces of the graphs: a span per graph run (memoryx_add, memoryx_search, …) and per
node, and a span per model call with the GenAI semantic conventions (gen_ai.operation.name, gen_ai.provider.name,
gen_ai.request.model, gen_ai.usage.input_tokens / output_tokens; the span's duration is the latency).

Off unless configured: settings.otel_endpoint or OTEL_EXPORTER_OTLP_ENDPOINT (an OTLP/HTTP collector; needs the
`otel` extra), or `use_tracer_provider(provider)` from an application that sets OpenTelemetry up itself (and
from the tests, with the SDK's in-memory exporter). When off, nothing here imports opentelemetry and the graphs
run without the callback.

The spans come from a LangChain callback handler passed in the run's config, so they follow LangGraph's own run
tree (parent run -> child span) in sync and async runs alike. Attributes carry names, counts and timings only;
tenant text (user ids, queries, messages, memories) goes in only with settings.otel_content.
"""

from __future__ import annotations

import os
import threading
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

_lock = threading.Lock()
_provider: Any = None  # the TracerProvider in use, once configured
_HIDDEN = "langsmith:hidden"  # LangGraph's internal runnables (channel writes, branches): no span of their own
_CONTENT_CHARS = 500


# LangSmith's switches (LangChain's older names too): when one is "true", LangChain traces every run
_LANGSMITH_SWITCHES = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")


def langsmith_tracing() -> bool:
    """Whether LangSmith tracing is switched on in the environment."""
    return any(os.environ.get(name, "").strip().lower() == "true" for name in _LANGSMITH_SWITCHES)


def use_tracer_provider(provider: Any) -> None:
    """Trace through `provider` (an opentelemetry.sdk.trace.TracerProvider); None turns tracing off again for
    Memory instances built afterwards."""
    global _provider
    with _lock:
        _provider = provider


def _endpoint(settings: Any) -> str | None:
    return settings.otel_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None


def _configured_provider(settings: Any) -> Any:
    global _provider
    with _lock:
        if _provider is not None or not _endpoint(settings):
            return _provider
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # the otel extra
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        endpoint = _endpoint(settings).rstrip("/")
        provider = TracerProvider(resource=Resource.create({"service.name": "memoryx"}))
        url = endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
        _provider = provider
        return provider


def tracing_callbacks(settings: Any) -> list:
    """[the span handler] when tracing is configured, else [] (and opentelemetry stays unimported)."""
    provider = _configured_provider(settings)
    if provider is None:
        return []
    return [SpanHandler(provider.get_tracer("memoryx"), content=settings.otel_content)]


class SpanHandler(BaseCallbackHandler):
    """LangChain run events -> OpenTelemetry spans (see the module docstring)."""

    run_inline = True  # in async runs too: a child's start must see its parent's span

    def __init__(self, tracer: Any, *, content: bool = False):
        self.tracer = tracer
        self.content = content
        self._spans: dict[UUID, Any] = {}
        self._alias: dict[UUID, UUID | None] = {}  # hidden run -> the visible run its children hang under
        self._mutex = threading.Lock()

    # --- bookkeeping ------------------------------------------------------------------------------------

    def _parent(self, parent_run_id: UUID | None) -> Any:
        with self._mutex:
            while parent_run_id is not None and parent_run_id in self._alias:
                parent_run_id = self._alias[parent_run_id]
            return self._spans.get(parent_run_id) if parent_run_id is not None else None

    def _start(self, name: str, run_id: UUID, parent_run_id: UUID | None, attributes: dict) -> None:
        from opentelemetry import trace  # imported once tracing is on: the handler exists only then

        parent = self._parent(parent_run_id)
        ctx = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(name, context=ctx, attributes={k: v for k, v in attributes.items() if v is not None})
        with self._mutex:
            self._spans[run_id] = span

    def _end(self, run_id: UUID, error: BaseException | None = None, attributes: dict | None = None) -> None:
        from opentelemetry.trace import Status, StatusCode

        with self._mutex:
            span = self._spans.pop(run_id, None)
            self._alias.pop(run_id, None)
        if span is None:
            return
        for key, value in (attributes or {}).items():
            if value is not None:
                span.set_attribute(key, value)
        if error is not None:
            if self.content:  # an exception's message may quote the input
                span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        span.end()

    def _text(self, value: Any) -> str | None:
        return str(value)[:_CONTENT_CHARS] if self.content and value is not None else None

    # --- graphs and nodes -------------------------------------------------------------------------------

    def on_chain_start(self, serialized: dict | None, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                       tags: list[str] | None = None, metadata: dict | None = None, **kwargs: Any) -> None:
        if _HIDDEN in (tags or []):
            with self._mutex:
                self._alias[run_id] = parent_run_id
            return
        metadata = metadata or {}
        name = kwargs.get("name") or (serialized or {}).get("name") or "chain"
        node = metadata.get("langgraph_node")
        self._start(str(name), run_id, parent_run_id, {
            "memoryx.kind": "node" if node else "graph", "langgraph.node": node,
            "langgraph.step": metadata.get("langgraph_step"), "memoryx.trace_id": metadata.get("trace_id"),
            "memoryx.user_id": self._text(metadata.get("user_id")),
            "memoryx.input": self._text(inputs) if not node else None,
        })

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    # --- model calls (GenAI semantic conventions) -------------------------------------------------------

    def on_chat_model_start(self, serialized: dict | None, messages: list, *, run_id: UUID,
                            parent_run_id: UUID | None = None, metadata: dict | None = None, **kwargs: Any) -> None:
        metadata = metadata or {}
        params = kwargs.get("invocation_params") or {}
        model = metadata.get("ls_model_name") or params.get("model") or params.get("model_name") or \
            (serialized or {}).get("name") or "model"
        self._start(f"chat {model}", run_id, parent_run_id, {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": metadata.get("ls_provider"),
            "gen_ai.request.model": str(model), "gen_ai.request.temperature": metadata.get("ls_temperature"),
            "gen_ai.request.max_tokens": metadata.get("ls_max_tokens"),
            "memoryx.input": self._text(messages),
        })

    def on_llm_start(self, serialized: dict | None, prompts: list[str], *, run_id: UUID,
                     parent_run_id: UUID | None = None, metadata: dict | None = None, **kwargs: Any) -> None:
        self.on_chat_model_start(serialized, prompts, run_id=run_id, parent_run_id=parent_run_id, metadata=metadata,
                                 **kwargs)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        usage: dict = {}
        model = None
        for generations in getattr(response, "generations", None) or []:
            for gen in generations:
                message = getattr(gen, "message", None)
                meta = getattr(message, "usage_metadata", None) or {}
                for key in ("input_tokens", "output_tokens"):
                    if meta.get(key) is not None:
                        usage[key] = usage.get(key, 0) + int(meta[key])
                model = model or (getattr(message, "response_metadata", None) or {}).get("model_name")
        token_usage = (getattr(response, "llm_output", None) or {}).get("token_usage") or {}
        usage.setdefault("input_tokens", token_usage.get("prompt_tokens"))
        usage.setdefault("output_tokens", token_usage.get("completion_tokens"))
        self._end(run_id, attributes={"gen_ai.usage.input_tokens": usage.get("input_tokens"),
                                      "gen_ai.usage.output_tokens": usage.get("output_tokens"),
                                      "gen_ai.response.model": model})

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)
