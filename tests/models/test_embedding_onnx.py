"""The shape of the ONNX encoder's graph and session: what makes it fast, checked so an upgrade cannot undo it
silently.

The graph is the suite's shared encoder cache (MEMORYX_EMBEDDING_CACHE_DIR, built once, verified on load).
Agreement with torch is covered by test_embeddings_runtime.py.
"""

from __future__ import annotations

import collections
import json
import logging
import os
from pathlib import Path

import pytest

from memoryx.models import embedding_onnx
from memoryx.models.embedding_onnx import DISABLED_ORT_OPTIMIZERS, EXPORT_FORMAT, cache_paths, load_onnx_encoder
from memoryx.models.embeddings import _minilm_path

pytestmark = pytest.mark.integration

onnx = pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def cached_graph() -> tuple[Path, Path]:
    cache = Path(os.environ["MEMORYX_EMBEDDING_CACHE_DIR"])
    load_onnx_encoder(_minilm_path(), cache)  # builds it if this machine has no cache yet
    return cache_paths(_minilm_path(), cache)


def _op_counts(path: Path) -> collections.Counter:
    return collections.Counter(node.op_type for node in onnx.load(str(path)).graph.node)


def test_the_cached_graph_has_plain_attention(cached_graph):
    onnx_path, meta_path = cached_graph
    ops = _op_counts(onnx_path)
    # eager attention: one Softmax per layer and none of SDPA's NaN guards around it
    assert ops["Softmax"] == 6 and ops["IsNaN"] == 0, ops
    meta = json.loads(meta_path.read_text())
    assert (meta["format"], meta["attention"]) == (EXPORT_FORMAT, "eager")
    assert meta["min_cosine_vs_torch"] >= embedding_onnx.EXPORT_MIN_COSINE


def test_the_session_leaves_out_the_slower_skip_layer_norm(cached_graph, tmp_path):
    """ONNX Runtime ignores names it does not know in `disabled_optimizers`: if a release renamed the fusion,
    the slower kernel would come back without a word. Compare the optimised graphs with and without."""
    import onnxruntime as ort

    onnx_path, _ = cached_graph

    def optimised(disabled: list[str]) -> collections.Counter:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.optimized_model_filepath = str(tmp_path / f"optimised-{len(disabled)}.onnx")
        opts.log_severity_level = 3
        ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"], disabled_optimizers=disabled)
        return _op_counts(Path(opts.optimized_model_filepath))

    assert optimised([])["SkipLayerNormalization"] == 12  # what ORT does on its own: one per residual + norm
    ours = optimised(list(DISABLED_ORT_OPTIMIZERS))
    assert ours["SkipLayerNormalization"] == 0 and ours["LayerNormalization"] == 13, ours


def test_a_cache_of_the_previous_format_is_not_reused(monkeypatch, tmp_path, caplog):
    model = _minilm_path()
    current = cache_paths(model, tmp_path)
    monkeypatch.setattr(embedding_onnx, "EXPORT_FORMAT", EXPORT_FORMAT - 1)
    assert cache_paths(model, tmp_path) != current  # an older build writes, and looks for, another file
    monkeypatch.undo()
    # and a file of the old format found under the current name (copied by hand, say) is rebuilt, not trusted
    onnx_path, meta_path = current
    onnx_path.write_bytes(b"an older graph")
    meta_path.write_text(json.dumps({"format": EXPORT_FORMAT - 1, "digest": "0" * 40, "probe_vectors": []}))
    with caplog.at_level(logging.WARNING, logger="memoryx.models.embedding_onnx"):
        assert embedding_onnx._load_cached(Path(model), onnx_path, meta_path, {}) is None
    assert f"format {EXPORT_FORMAT - 1} != {EXPORT_FORMAT}" in caplog.text


def test_a_verified_file_is_not_hashed_again_but_a_changed_one_is(cached_graph, tmp_path, monkeypatch, caplog):
    """The 90 MB digest runs once per file (the stamp beside it); a file changed in place, even at the same size,
    is hashed again and refused."""
    import shutil

    from memoryx.models import onnx_files

    src_onnx, src_meta = cached_graph
    onnx_path, meta_path = tmp_path / src_onnx.name, tmp_path / src_meta.name
    shutil.copyfile(src_onnx, onnx_path)
    shutil.copyfile(src_meta, meta_path)
    hashed: list[Path] = []
    real = onnx_files.file_digest
    monkeypatch.setattr(onnx_files, "file_digest", lambda p: hashed.append(p) or real(p))
    model = Path(_minilm_path())
    assert embedding_onnx._load_cached(model, onnx_path, meta_path, {}) is not None
    assert hashed == [onnx_path] and onnx_path.with_suffix(".verified").is_file()
    assert embedding_onnx._load_cached(model, onnx_path, meta_path, {}) is not None
    assert hashed == [onnx_path]  # the second start trusts the stamp
    data = bytearray(onnx_path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one byte flipped
    onnx_path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="memoryx.models.embedding_onnx"):
        assert embedding_onnx._load_cached(model, onnx_path, meta_path, {}) is None
    assert len(hashed) == 2 and "digest differs" in caplog.text
