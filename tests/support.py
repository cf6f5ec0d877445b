"""Helpers shared by the tests (`from tests.support import ...`): the one way a test builds Services on real
stores, the add-graph runner and scripted chat models.

The `graph_services` fixture of tests/conftest.py is built here too; a test that needs its own Services
(its own models or settings) calls `make_services(tmp_path, ...)`.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

# torch's OpenMP workers spin after each MiniLM call and starve langgraph's threads on a 2-core machine
# (a 20 ms embedding took 200+ ms inside the graph); set before torch starts its thread pool.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402

from memoryx.core.scope import Scope
from memoryx.runtime.context import Context
from memoryx.settings import Settings


@lru_cache(maxsize=1)
def shared_embeddings():
    """One MiniLM per test process (loading it is the slow part)."""
    from memoryx.models.embeddings import make_embeddings

    return make_embeddings(Settings())


@lru_cache(maxsize=1)
def exact_embeddings():
    """One fp32 MiniLM per test process, for tests that pin a close call of the ranking: the int8 encoder's dot
    products come out a little differently on a CPU with 8-bit dot-product instructions (VNNI) than on one without
    (AVX2), enough to swap two memories that score within a few hundredths; fp32's are the same on both."""
    from memoryx.models.embeddings import make_embeddings

    return make_embeddings(Settings(embedding_precision="fp32"))


@contextmanager
def told(tmp_path, said: list[tuple[str, str]], *, user_id: str = "u", now: str = "2025-01-20T12:00:00+00:00",
         infer: bool = False, **memory_options):
    """A Memory told `said` through the public API - (day, text) pairs, each a user turn at 19:00 UTC that day,
    added as said (`infer=False`, no graph) unless asked otherwise - and a function giving the text of the first
    result for a question asked at `now`."""
    from memoryx.api.memory import Memory

    options = {"data_dir": tmp_path, "graph_backend": "none", "embeddings": shared_embeddings(), **memory_options}
    with Memory(**options) as m:
        for day, text in said:
            m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id=user_id,
                  infer=infer)
        yield lambda q: m.search(q, user_id=user_id, limit=3, now=now)["results"][0]["memory"]


def make_services(tmp_path, *, llm: Any = "offline", extraction_llm=None, judgment_llm=None, graph_llm=None,
                  graph: bool = False, **settings_overrides):
    """Services in `tmp_path`/data: the offline model unless models are given, the embedded FalkorDB only when
    `graph` is set, the SQLite checkpointer, and the process's one MiniLM. The caller closes them."""
    from memoryx.runtime.services import build_services

    values = {"data_dir": tmp_path / "data", "graph_backend": "falkordb" if graph else "none", "checkpointer": "sqlite"}
    settings = Settings(**{**values, **settings_overrides})
    return build_services(settings, llm=llm, extraction_llm=extraction_llm, judgment_llm=judgment_llm,
                          graph_llm=graph_llm, embeddings=shared_embeddings())


def ctx(services, **overrides) -> Context:
    values = {"services": services, "graph_enabled": False, "review": False}
    values.update(overrides)
    return Context(**values)


def run_add(graph, services, messages, *, user_id="alice", trace_id=None, context=None, **extra) -> dict:
    """Invoke the add graph like the Python API does; returns the final `result`."""
    from memoryx.graphs.add import add_run_config

    trace_id = trace_id or str(uuid.uuid4())
    inp = {"messages": messages, "user_id": user_id, "trace_id": trace_id, **extra}
    out = graph.invoke(inp, add_run_config(trace_id, user_id=user_id, services=services),
                       context=context or ctx(services))
    return out.get("result") or out


def memories(services, user_id="alice") -> list[dict]:
    return services.sql.list_memories(Scope(user_id=user_id), limit=None)


def texts(services, user_id="alice") -> list[str]:
    return sorted(m["memory"] for m in memories(services, user_id))


def scripted(*answers: str | AIMessage) -> FakeMessagesListChatModel:
    """A chat model that answers with the given texts, in order (and fails loudly when it runs out)."""
    return FakeMessagesListChatModel(responses=[a if isinstance(a, AIMessage) else AIMessage(content=a) for a in answers])


def facts_answer(*facts: str, **extra) -> str:
    return json.dumps({"facts": [{"text": f, "category": "fact", "importance": 0.7, "memory_type": "semantic", **extra}
                                 for f in facts]})


def ops_answer(*ops: dict) -> str:
    return json.dumps({"operations": list(ops)})


class NoModel(FakeMessagesListChatModel):
    """A chat model that must not be called."""

    def __init__(self):
        super().__init__(responses=[AIMessage(content="")])

    def _generate(self, *args, **kwargs):  # noqa: D401
        raise AssertionError("the model was called but should not have been")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the tests' own servers bind loopback only)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """`with ServerThread(create_app(...)) as srv:` — uvicorn on 127.0.0.1 in a thread of this process,
    `srv.url`, stopped on exit."""

    def __init__(self, app):
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=30)
