"""An int8 copy of the local ONNX encoder (MEMORYX_EMBEDDING_PRECISION=int8): the cached fp32 graph with its
weights quantised to 8 bits per output channel and its activations per run (onnxruntime.quantization's
`quantize_dynamic`, QInt8), so it encodes each text in a run of its own: a text's vector is then the same
whatever is encoded beside it. On a CPU with 8-bit dot products it costs the encoder about 2.5x less CPU, at a cosine
of ~0.99 to fp32's vectors; on LongMemEval the harness's recall did not move (docs/benchmarks.md, "int8 MiniLM
through the harness").

Built beside the fp32 file the first time it is asked for, from that file, under a lock, written atomically,
then trusted on reuse only after the same checks as the fp32 cache: the recorded digest, the fp32 file it came
from (its digest) and the quantiser's settings, and the recorded probe vectors. At build its probes must stay
within INT8_MIN_COSINE of the fp32 graph's.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from memoryx.models.embedding_onnx import (
    PROBES,
    OnnxEncoderError,
    OnnxSentenceEncoder,
    _build_lock,
    _check_short_probes,
    _cosines,
    _probe_vectors,
    cache_paths,
    load_onnx_encoder,
)
from memoryx.models.onnx_files import atomic_write_text, file_digest, holds_digest

log = logging.getLogger(__name__)

# the int8 graph's probes against the fp32 graph's: a check that quantising worked, not a quality gate (that is the
# benchmark's). MiniLM measured 0.96 at the lowest probe (the 256-token and CJK ones), 0.94 over 512 chat turns.
INT8_MIN_COSINE = 0.9


def quantizer() -> dict[str, Any]:
    """What the int8 file depends on besides its fp32 source: a change rebuilds it."""
    import onnxruntime

    return {"weights": "QInt8", "per_channel": True, "reduce_range": False, "onnxruntime": onnxruntime.__version__}


def int8_paths(onnx_path: Path) -> tuple[Path, Path]:
    """(graph, metadata) of the int8 copy of the fp32 graph `onnx_path`."""
    return onnx_path.with_name(onnx_path.stem + ".int8.onnx"), onnx_path.with_name(onnx_path.stem + ".int8.json")


def int8_encoder(model_dir: str | Path, cache_dir: str | Path) -> tuple[OnnxSentenceEncoder, bool]:
    """(encoder, built): the int8 encoder of `model_dir` cached in `cache_dir`. The fp32 graph is loaded (built
    first if missing) only when its file no longer holds the bytes its metadata records: a process that finds
    both files intact opens the int8 session alone, not a second 90 MB one."""
    onnx_path, meta_path = cache_paths(model_dir, cache_dir)
    built = False
    try:
        intact = onnx_path.is_file() and holds_digest(onnx_path, json.loads(meta_path.read_text()).get("digest"))
    except (OSError, ValueError):
        intact = False
    if not intact:
        _, built = load_onnx_encoder(model_dir, cache_dir)
    return load_int8_encoder(onnx_path, meta_path, model_dir, {}), built


def load_int8_encoder(onnx_path: Path, meta_path: Path, model_dir: str | Path, options: dict[str, Any]
                      ) -> OnnxSentenceEncoder:
    """The int8 encoder of the checked fp32 graph `onnx_path` (its metadata at `meta_path`), quantising it first
    when the copy is missing, stale or fails a check. Raises OnnxEncoderError when it can be neither."""
    onnx_path, meta_path, model_dir = Path(onnx_path), Path(meta_path), Path(model_dir)
    target, target_meta = int8_paths(onnx_path)
    source = json.loads(meta_path.read_text())
    encoder = _load_cached(target, target_meta, source, model_dir, options)
    if encoder is not None:
        return encoder
    with _build_lock(target.with_suffix(".lock")):
        encoder = _load_cached(target, target_meta, source, model_dir, options)  # another process built it
        if encoder is not None:
            return encoder
        log.warning("quantising the local ONNX encoder to int8 in %s, once per machine (seconds)", target.parent)
        return _build(onnx_path, source, target, target_meta, model_dir, options)


def _load_cached(target: Path, target_meta: Path, source: dict, model_dir: Path, options: dict[str, Any]
                 ) -> OnnxSentenceEncoder | None:
    if not (target.is_file() and target_meta.is_file()):
        return None
    try:
        meta = json.loads(target_meta.read_text())
        if meta.get("source_digest") != source.get("digest") or meta.get("quantizer") != quantizer():
            raise OnnxEncoderError("made from another fp32 graph or by another quantiser")
        if not holds_digest(target, meta.get("digest")):
            raise OnnxEncoderError("file digest differs from the recorded one (corrupt or partly written)")
        encoder = OnnxSentenceEncoder(target, model_dir, each_alone=True, **options)
        # against the vectors the probes gave alone at build (recorded: the probes as one call, then each alone)
        _check_short_probes(encoder, np.asarray(meta["probe_vectors"], dtype=np.float32)[len(PROBES):])
        return encoder
    except (OnnxEncoderError, OSError, ValueError, KeyError) as exc:
        log.warning("ignoring the cached int8 encoder %s (%s); quantising it again", target, exc)
        return None


def _build(onnx_path: Path, source: dict, target: Path, target_meta: Path, model_dir: Path,
           options: dict[str, Any]) -> OnnxSentenceEncoder:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    root = logging.getLogger()
    level = root.level
    try:
        root.setLevel(logging.ERROR)  # the quantiser's advice to pre-process the graph is for static quantisation
        try:
            quantize_dynamic(str(onnx_path), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                             reduce_range=False)
        except Exception as exc:
            raise OnnxEncoderError(f"onnxruntime could not quantise {onnx_path}: {exc}") from exc
        finally:
            root.setLevel(level)
        candidate = OnnxSentenceEncoder(tmp, model_dir, each_alone=True, **options)
        got = _probe_vectors(candidate)
        cos = _cosines(got, np.asarray(source["probe_vectors"], dtype=np.float32))
        if float(cos.min()) < INT8_MIN_COSINE:
            raise OnnxEncoderError(f"the int8 encoder disagrees with fp32 (min cosine {cos.min():.4f} < "
                                   f"{INT8_MIN_COSINE}); use MEMORYX_EMBEDDING_PRECISION=fp32")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        meta = {"source_digest": source["digest"], "quantizer": quantizer(), "digest": file_digest(tmp),
                "min_cosine_vs_fp32": float(cos.min()), "probe_vectors": got.tolist()}
        os.replace(tmp, target)
        atomic_write_text(target_meta, json.dumps(meta))
        log.info("built the int8 encoder %s (min cosine vs fp32 %.4f)", target, cos.min())
    finally:
        tmp.unlink(missing_ok=True)
    candidate.path = target
    return candidate
