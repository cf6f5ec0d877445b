"""The int8 copy of the local ONNX encoder (MEMORYX_EMBEDDING_PRECISION=int8): quantised once from the checked fp32
graph, reused only after its checks, quantised again when it or its source changed; and used through the API.

Real parts only: the packaged MiniLM weights, the fp32 graph the suite's cache holds, onnxruntime's quantiser.
Each test quantises a copy of that fp32 graph in its own directory (a few seconds).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from memoryx.errors import InvalidInputError
from memoryx.models.embedding_onnx import cache_paths, load_onnx_encoder
from memoryx.models.embeddings import LocalMiniLMEmbeddings, _minilm_path, make_embeddings
from memoryx.models.onnx_int8 import int8_paths, load_int8_encoder
from memoryx.settings import Settings

pytestmark = pytest.mark.integration

TEXTS = ["Alice adopted a golden retriever named Max last spring.", "我下个月要搬到上海，新工作在浦东。",
         "来週の金曜日に京都で友達と会う予定です。", "ok"]


@pytest.fixture()
def fp32_copy(tmp_path):
    """(fp32 graph, its metadata, model folder, fp32 encoder): the suite's checked cache copied into tmp_path."""
    model_dir = _minilm_path()
    cache = Settings().resolved_embedding_cache_dir()
    fp32, _ = load_onnx_encoder(model_dir, cache)
    onnx_path, meta_path = cache_paths(model_dir, cache)
    for f in (onnx_path, meta_path):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / onnx_path.name, tmp_path / meta_path.name, model_dir, fp32


def _alone(encoder, texts):
    return np.stack([encoder.encode([t])[0] for t in texts])


def test_int8_is_quantised_once_reused_and_rebuilt_when_it_or_its_source_changed(fp32_copy, caplog):
    onnx_path, meta_path, model_dir, fp32 = fp32_copy
    first = load_int8_encoder(onnx_path, meta_path, model_dir, {})
    target, target_meta = int8_paths(onnx_path)
    assert first.path == target and target.stat().st_size < onnx_path.stat().st_size / 3
    vectors = _alone(first, TEXTS)
    cos = (vectors * _alone(fp32, TEXTS)).sum(axis=1)
    assert cos.min() > 0.95 and cos.max() < 0.99999  # close to fp32, and not fp32 itself
    built = target.stat().st_mtime_ns

    again = load_int8_encoder(onnx_path, meta_path, model_dir, {})
    assert target.stat().st_mtime_ns == built and np.array_equal(_alone(again, TEXTS), vectors)

    with target.open("r+b") as f:  # a corrupt copy is found by its digest and quantised again
        f.seek(target.stat().st_size // 2)
        f.write(b"\0" * 64)
    caplog.clear()
    rebuilt = load_int8_encoder(onnx_path, meta_path, model_dir, {})
    assert "ignoring the cached int8 encoder" in caplog.text and "digest" in caplog.text
    assert np.array_equal(_alone(rebuilt, TEXTS), vectors)

    source = json.loads(meta_path.read_text())  # another fp32 graph (its digest) makes the copy stale
    meta_path.write_text(json.dumps({**source, "digest": "0" * len(source["digest"])}))
    caplog.clear()
    load_int8_encoder(onnx_path, meta_path, model_dir, {})
    assert "another fp32 graph" in caplog.text
    assert json.loads(target_meta.read_text())["source_digest"] == "0" * len(source["digest"])


def test_an_int8_vector_does_not_depend_on_the_texts_encoded_beside_it(fp32_copy):
    onnx_path, meta_path, model_dir, _ = fp32_copy
    int8 = load_int8_encoder(onnx_path, meta_path, model_dir, {})
    # the activations are quantised per run: a batch's longest text would set the scale of the others
    mates = TEXTS + [" ".join(["a long text whose activations would widen the quantisation range"] * 12)]
    together = int8.encode(mates, batch_size=64)
    assert np.array_equal(together[: len(TEXTS)], _alone(int8, TEXTS))
    assert np.array_equal(int8.encode(list(reversed(mates)), batch_size=2)[::-1], together)


def test_int8_is_a_setting_and_searches_through_the_api(tmp_path):
    from memoryx.api.memory import Memory

    embeddings = make_embeddings(Settings(embedding_precision="int8"))  # quantised in the suite's encoder cache
    assert embeddings.runtime == "onnx" and embeddings.encoder.model.path.name.endswith(".int8.onnx")
    with Memory(data_dir=tmp_path / "data", graph_backend="none", embeddings=embeddings) as m:
        for text in ["I work as a nurse in Leeds", "my cat Mango is six", "I am allergic to penicillin"]:
            m.add([{"role": "user", "content": text}], user_id="u", infer=False)
        found = m.search("which medicine must I avoid?", user_id="u", limit=1)["results"]
    assert "penicillin" in found[0]["memory"]
    with pytest.raises(InvalidInputError, match="int8"):
        LocalMiniLMEmbeddings(runtime="torch", precision="int8")
    with pytest.raises(ValueError):
        Settings(embedding_precision="int4")
