"""The files and helpers bench_int8_encoder.py measures with: the product's cached fp32 MiniLM graph, its int8
copies (onnxruntime.quantization.quantize_dynamic), encoders over either, token counts, and the texts a
LongMemEval haystack gives the encoder (turns, long-turn windows, focus windows)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "recall"))
import sets  # noqa: E402  (the recall harness's reading of the shared data)

VARIANTS = {  # name: (per channel, reduce_range, the feed-forward output projections left in fp32); weights
    # QInt8, activations quantised per batch (dynamic). The projections after GELU see the widest activations.
    "s8": (False, False, False),
    "s8-pc": (True, False, False),
    "s8-rr": (False, True, False),
    "s8-pc-rr": (True, True, False),
    "s8-pc-ffn32": (True, False, True),
}


def model_dir() -> Path:
    from memoryx.models.embeddings import _minilm_path

    return Path(_minilm_path())


def fp32_path() -> Path:
    """The product's cached fp32 graph (built first if missing, as `memoryx setup` does)."""
    from memoryx.models.embedding_onnx import load_onnx_encoder
    from memoryx.settings import Settings

    encoder, _ = load_onnx_encoder(model_dir(), Settings().resolved_embedding_cache_dir())
    return encoder.path


def tokenizer():
    from tokenizers import Tokenizer

    from memoryx.models.embedding_onnx import _max_seq_length

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.enable_truncation(max_length=_max_seq_length(model_dir()))
    tok.no_padding()
    return tok


def token_counts(tok, texts: list[str]) -> list[int]:
    return [len(e.ids) for e in tok.encode_batch(list(texts))] if texts else []


def padded_tokens(lengths: list[int], batch_size: int = 64) -> int:
    """Tokens the encoder computes for one call of these lengths: each batch padded to its longest."""
    from memoryx.models.embedding_onnx import padded_batches

    return sum(len(b) * max(lengths[i] for i in b) for b in padded_batches(lengths, batch_size))


def encoder(path: Path, *, single: bool):
    """An OnnxSentenceEncoder over `path`: one thread (`single`) or the product's default threading."""
    from memoryx.models.embedding_onnx import OnnxSentenceEncoder

    if single:
        return OnnxSentenceEncoder(path, model_dir(), threads=1, workers=1)
    return OnnxSentenceEncoder(path, model_dir())


def build_int8(source: Path, out_dir: Path, names: list[str]) -> dict[str, Path]:
    """The int8 variants of `source`, written as `<fp32 stem>.int8-<variant>.onnx` (beside it, if out_dir were
    the cache): the fp32 file's fingerprinted stem names which weights they came from."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(source))
    made_by = {o: node for node in graph.graph.node for o in node.output}
    weights = {init.name for init in graph.graph.initializer}
    ffn_out = [node.name for node in graph.graph.node if node.op_type == "MatMul" and node.input[1] in weights
               and getattr(made_by.get(node.input[0]), "op_type", None) == "Gelu"]
    if len(ffn_out) != 6:  # MiniLM-L6: one per layer; anything else means the graph is not the one measured
        raise SystemExit(f"found {len(ffn_out)} feed-forward output projections in {source}, expected 6")
    root = logging.getLogger()
    level, root.level = root.level, logging.ERROR  # its advice to pre-process is for static quantisation
    out = {}
    for name in names:
        per_channel, reduce_range, keep_ffn = VARIANTS[name]
        target = out_dir / f"{source.stem}.int8-{name}.onnx"
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=per_channel,
                         reduce_range=reduce_range, nodes_to_exclude=ffn_out if keep_ffn else [])
        out[name] = target
    root.setLevel(level)
    return out


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def turn_texts(q: dict) -> list[tuple[str, str]]:
    """(turn id, memory text) of the user turns the harness writes for `q`, as add_many stores them (stripped,
    a message over max_message_chars split as the bulk path splits it)."""
    from memoryx.ingest.messages import split_long
    from memoryx.settings import Settings

    limit = Settings.model_fields["max_message_chars"].default
    out = []
    for item in sets.lme_items(q):
        content = item["messages"][0]["content"]
        tid = sets.turn_id(item["metadata"]["session"], item["metadata"]["turn"])
        pieces = split_long(content, limit) if len(content) > limit else [content.strip()]
        out += [(tid, p) for p in pieces if p.strip()]
    return out


def window_kinds(text: str, chunk: int, focus: int) -> tuple[list[str], list[str]]:
    """(windows of a long text, focus windows of a mid-length one) for these settings (stores/vectors/chunks.py)."""
    from memoryx.stores.vectors.chunks import text_chunks

    long_windows = text_chunks(text, chunk, 0)
    if long_windows:
        return long_windows, []
    return [], text_chunks(text, chunk, focus)
