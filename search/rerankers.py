"""Rerankers: a second opinion on the best candidates of a search, behind one small interface.

MEMORYX_RERANKER picks one (`make_reranker`):

    unset / "none"            NoReranker: the fused ranking stands (the graph skips the rerank step)
    "cross-encoder:<path>"    CrossEncoderReranker: a sentence-transformers cross-encoder, scores squashed
                              to [0, 1] with a sigmoid
    any other spec            ModelReranker: a chat model ("provider:model") rates each memory 0-10

The rerank node blends a reranker's score half and half with the fused relevance, then scores again.
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Sequence

from memoryx.models.llm_io import call_with_retry, extract_json, message_text
from memoryx.prompts.search import RERANK_PROMPT, RETRY_RERANK_PROMPT, RerankScores, format_rerank_input
from memoryx.settings import Settings

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

CROSS_ENCODER_PREFIX = "cross-encoder:"


class Reranker(ABC):
    """Scores (query, memory text) pairs."""

    spec: str

    @abstractmethod
    def scores(self, query: str, texts: Sequence[str]) -> list[float] | None:
        """One relevance in [0, 1] per text, in order; None: the reranker has no opinion (keep the order)."""


class NoReranker(Reranker):
    spec = "none"

    def scores(self, query: str, texts: Sequence[str]) -> list[float] | None:
        return None


class CrossEncoderReranker(Reranker):
    """A cross-encoder (sentence-transformers `CrossEncoder`, or anything with its `predict`)."""

    def __init__(self, path: str, model: Any | None = None):
        self.spec = CROSS_ENCODER_PREFIX + path
        self.path = path
        self._model = model

    def scores(self, query: str, texts: Sequence[str]) -> list[float] | None:
        model = self._model or _cross_encoder(self.path)
        return [1.0 / (1.0 + math.exp(-float(s))) for s in model.predict([(query, t) for t in texts])]


class ModelReranker(Reranker):
    """A chat model rating each memory 0-10 (one call, one retry that shows the model its error)."""

    def __init__(self, spec: str, settings: Settings, llm: Any | None = None):
        self.spec = spec
        self._settings = settings
        self._llm = llm

    def _model(self) -> Any:
        if self._llm is None:
            from memoryx.models.factory import make_chat_model  # the chat-model stack: only for this reranker

            self._llm = make_chat_model(self.spec, self._settings, role="rerank")  # rerank caps and timeout
        return self._llm

    def scores(self, query: str, texts: Sequence[str]) -> list[float] | None:
        def read(answer: BaseMessage) -> list[float]:
            data = extract_json(message_text(answer))
            scores = RerankScores.model_validate(data).scores
            if len(scores) != len(texts):
                raise ValueError(f"{len(scores)} scores for {len(texts)} memories; give one score per memory")
            return [max(0.0, min(1.0, s / 10.0)) for s in scores]

        from langchain_core.messages import HumanMessage, SystemMessage

        messages = [SystemMessage(content=RERANK_PROMPT),
                    HumanMessage(content=format_rerank_input(query, list(texts)))]
        return call_with_retry(self._model(), messages, read, retry_prompt=RETRY_RERANK_PROMPT).value


def reranker_spec(value: str | None) -> str | None:
    """The configured reranker spec, None when reranking is off."""
    value = (value or "").strip()
    return None if value.lower() in ("", "none") else value


def make_reranker(spec: str | None, settings: Settings) -> Reranker:
    spec = reranker_spec(spec)
    if spec is None:
        return NoReranker()
    if spec.startswith(CROSS_ENCODER_PREFIX):
        return CrossEncoderReranker(spec[len(CROSS_ENCODER_PREFIX):])
    return ModelReranker(spec, settings)


# loading a cross-encoder takes seconds: one instance per path for the process
_cross_encoders: dict[str, Any] = {}
_ce_lock = threading.Lock()


def _cross_encoder(path: str) -> Any:
    with _ce_lock:
        if path not in _cross_encoders:
            from sentence_transformers import CrossEncoder

            _cross_encoders[path] = CrossEncoder(path, device="cpu")
        return _cross_encoders[path]
