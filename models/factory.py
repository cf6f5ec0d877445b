"""Chat models per role from a spec string, or an injected LangChain chat model passed through.

Specs:
- "offline": the rule-based OfflineChatModel (demo and tests, no key).
- "provider:model" (e.g. "openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest", "ollama:qwen2.5"):
  langchain's `init_chat_model` with MEMORYX_LLM_BASE_URL / MEMORYX_LLM_API_KEY / MEMORYX_LLM_TEMPERATURE.
- "vllm:<model>", "openai-compatible:<model>", or any spec while MEMORYX_LLM_BASE_URL is set and the
  provider is openai: an OpenAI-compatible endpoint (vLLM, Ollama's /v1, a private gateway) via ChatOpenAI.
- A model name without a provider ("gpt-4o-mini") lets init_chat_model infer the provider.

Every model built from a spec is bounded for its role (`role_limits`): an output-token cap, a request timeout
and the client's transport retries (MEMORYX_<ROLE>_MAX_TOKENS, MEMORYX_<ROLE>_TIMEOUT_S,
MEMORYX_LLM_MAX_RETRIES). A small model without a cap generated until its context was full (8,190 tokens in
514 s for one extraction). Injected model instances are used as given: bound them yourself.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Literal

from langchain_core.language_models.chat_models import BaseChatModel

from memoryx.errors import InvalidInputError
from memoryx.models.offline import OfflineChatModel
from memoryx.settings import Settings

log = logging.getLogger(__name__)

OPENAI_COMPATIBLE = {"vllm", "openai-compatible", "openai_compatible", "local"}
Role = Literal["extraction", "judgment", "graph", "rerank"]
# providers whose LangChain classes take max_tokens / timeout / max_retries under these names
_STANDARD_LIMITS = {"", "openai", "azure_openai", "anthropic", "mistralai", "groq", "deepseek", "xai", "fireworks",
                    "together", "openai-compatible"}


def role_limits(settings: Settings, role: Role) -> tuple[int, float]:
    """(max output tokens, request timeout in seconds) of a model role. The query rewrite runs on the
    extraction model, so it has the extraction role's bounds."""
    limits = {
        "extraction": (settings.extraction_max_tokens, settings.extraction_timeout_s),
        "judgment": (settings.judgment_max_tokens, settings.judgment_timeout_s),
        "graph": (settings.graph_max_tokens, settings.graph_timeout_s),
        "rerank": (settings.rerank_max_tokens, settings.rerank_timeout_s),
    }
    return limits[role]


def _limit_kwargs(provider: str, settings: Settings, role: Role, openai_compatible: bool) -> dict[str, Any]:
    max_tokens, timeout = role_limits(settings, role)
    if provider == "ollama":  # ChatOllama: num_predict caps the output; the timeout goes to its HTTP client
        return {"num_predict": max_tokens, "client_kwargs": {"timeout": timeout}}
    kwargs: dict[str, Any] = {"max_tokens": max_tokens, "timeout": timeout, "max_retries": settings.llm_max_retries}
    if provider == "google_genai":
        return {"max_output_tokens": max_tokens, "timeout": timeout, "max_retries": settings.llm_max_retries}
    if openai_compatible:
        # langchain-openai sends the cap as max_completion_tokens only; llama.cpp's server (and older vLLM)
        # read max_tokens and silently ignore the other: send both
        kwargs["extra_body"] = {"max_tokens": max_tokens}
    if provider in _STANDARD_LIMITS or openai_compatible:
        return kwargs
    log.warning("chat model provider %r: MemoryX does not know its names for an output cap and a timeout; "
                "the %s model is unbounded (inject a bounded model instance instead)", provider, role)
    return {}


def make_chat_model(spec: str | BaseChatModel | Any, settings: Settings, role: Role = "extraction") -> BaseChatModel:
    """A chat model for `spec`, bounded for `role` (see `role_limits`); injected model instances (anything
    with `invoke`) are returned unchanged."""
    if not isinstance(spec, str):
        if spec is None:
            raise InvalidInputError("No chat model given: set MEMORYX_LLM to 'offline' or 'provider:model'.")
        return spec
    spec = spec.strip()
    if not spec or spec.lower() == "offline":
        return OfflineChatModel()

    provider, _, model = spec.partition(":") if ":" in spec else ("", "", spec)
    provider = provider.strip().lower()
    api_key = settings.llm_api_key or os.environ.get("OPENAI_API_KEY")
    common: dict[str, Any] = {"temperature": settings.llm_temperature}

    if provider in OPENAI_COMPATIBLE:
        from langchain_openai import ChatOpenAI

        if not settings.llm_base_url:
            raise InvalidInputError(f"Chat model {spec!r} needs MEMORYX_LLM_BASE_URL (the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1).")
        return ChatOpenAI(model=model, base_url=settings.llm_base_url, api_key=api_key or "not-needed", **common,
                          **_limit_kwargs("openai-compatible", settings, role, openai_compatible=True))

    compatible = provider in ("", "openai") and bool(settings.llm_base_url)
    kwargs: dict[str, Any] = {**common, **_limit_kwargs(provider, settings, role, openai_compatible=compatible)}
    if settings.llm_base_url:
        kwargs["base_url"] = settings.llm_base_url
    if api_key and provider in ("", "openai", "azure_openai", "anthropic", "mistralai", "groq", "deepseek", "xai", "fireworks", "together"):
        kwargs["api_key"] = api_key
    elif provider in ("openai", "") and settings.llm_base_url:
        kwargs["api_key"] = "not-needed"  # local OpenAI-compatible servers accept any key
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:  # langchain not installed: OpenAI(-compatible) still works through langchain-openai
        if provider not in ("", "openai"):
            raise InvalidInputError(f"Chat model {spec!r} needs the 'langchain' package (pip install langchain) for provider {provider!r}.") from None
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=model, **kwargs)
    try:
        return init_chat_model(model, model_provider=provider or None, **kwargs)
    except (ImportError, ValueError) as exc:
        raise InvalidInputError(f"Cannot create chat model {spec!r}: {exc}. Use 'offline' or 'provider:model' (set MEMORYX_LLM).") from exc


def model_name_of(llm: Any) -> str:
    """A readable model name for judgment records and LangSmith tags."""
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(llm, attr, None)
        if isinstance(value, str) and value:
            return value
    bound = getattr(llm, "bound", None)  # RunnableBinding (bind_tools)
    if bound is not None and bound is not llm:
        return model_name_of(bound)
    return type(llm).__name__
