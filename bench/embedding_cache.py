"""Document embeddings cached on disk between benchmark runs: the retrieval benches embed the same turns on
every run, and the encoder is most of their time. The vectors are the model's own (float32, base64, one JSON
line each); queries are always embedded live."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np


class CachedEmbeddings:
    """The default embeddings with the document vectors cached on disk between runs (float32, base64; the
    same vectors the model computes; queries are embedded live)."""

    def __init__(self, inner: Any, cache: Path | None, name: str = "docs"):
        self.inner = inner
        self._mem: dict[str, list[float]] = {}
        self._file = None
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            self._file = cache / f"{name}-{_model_key(inner)}.jsonl"
            if self._file.exists():
                for line in self._file.read_text().splitlines():
                    try:
                        k, v = json.loads(line)
                    except ValueError:  # a line cut short by an interrupted run
                        continue
                    self._mem[k] = np.frombuffer(base64.b64decode(v), dtype=np.float32).tolist()

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if self._key(t) not in self._mem]
        if missing:
            vecs = self.inner.embed_documents(missing)
            new = {self._key(t): [float(x) for x in v] for t, v in zip(missing, vecs)}
            self._mem.update(new)
            if self._file is not None:
                with self._file.open("a") as f:
                    f.writelines(json.dumps([k, base64.b64encode(np.asarray(v, dtype=np.float32).tobytes())
                                             .decode()]) + "\n" for k, v in new.items())
        return [self._mem[self._key(t)] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    def __getattr__(self, name):  # model name, dims, ... of the wrapped embeddings
        return getattr(self.inner, name)


def _model_key(embeddings: Any) -> str:
    """A stable name of the encoder (its folder, and its precision: int8 and fp32 vectors differ), so runs of one
    encoder share the cache."""
    name = str(getattr(embeddings, "model_path", None) or getattr(embeddings, "model_name", None) or "default")
    if getattr(embeddings, "precision", "fp32") != "fp32":  # fp32: the folder alone, so caches on disk stay valid
        name += f"|{embeddings.precision}"
    return hashlib.sha1(name.encode()).hexdigest()[:8]
