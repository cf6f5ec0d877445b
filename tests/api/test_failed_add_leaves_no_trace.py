"""What the client is told is what happened: an add that raised (an HTTP 5xx for a server's client) is not
applied later by the recovery of the next start, and its judgment shows it failed; a run that recovery
cannot resume is tried once, marked failed, and never retried at every start."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from langchain_core.language_models.chat_models import BaseChatModel

from memoryx import AsyncMemory, Memory

pytestmark = pytest.mark.integration


class ModelDown(BaseChatModel):
    """A chat model whose service is down: every call raises."""

    @property
    def _llm_type(self) -> str:
        return "down"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        raise RuntimeError("model service unavailable")


def _threads(m: Memory) -> set[str]:
    saver = m._core.add_graph().checkpointer
    return {c.config["configurable"]["thread_id"] for c in saver.list(None)}


def test_a_failed_add_is_not_applied_at_the_next_start(tmp_path):
    data = tmp_path / "data"
    trace = str(uuid.uuid4())
    with Memory(data_dir=data, graph_backend="none", checkpointer="sqlite", llm=ModelDown()) as m:
        with pytest.raises(Exception):
            m.add("I live in Berlin and I love sushi", user_id="alice", trace_id=trace)
        assert trace not in _threads(m)
    with Memory(data_dir=data, graph_backend="none", checkpointer="sqlite") as m:  # the model is back
        assert trace not in (m._core.recovered_runs.get("resumed") or [])
        assert m.get_all(user_id="alice")["results"] == []
        try:
            record = m.judgments(trace)
        except Exception:
            record = None
        assert record is None or record["status"] == "failed"


def test_recovery_tries_a_broken_run_once(tmp_path):
    data = tmp_path / "data"
    trace = str(uuid.uuid4())
    with Memory(data_dir=data, graph_backend="none", checkpointer="sqlite") as m:
        core = m._core
        graph = core.add_graph()
        inp, config = core.add_input("I live in Oslo", "bob", None, None, None, True, trace)
        for _ in graph.stream(inp, config, context=core.context()):
            break  # a run cut short after its first step: what a killed process leaves behind
        assert trace in _threads(m)
    with Memory(data_dir=data, graph_backend="none", checkpointer="sqlite", llm=ModelDown()) as m:
        report = m._core.recovered_runs
        assert trace in report.get("failed", {}), report
        assert trace not in _threads(m)
        assert m.judgments(trace)["status"] == "failed" if _has_judgment(m, trace) else True
    with Memory(data_dir=data, graph_backend="none", checkpointer="sqlite", llm=ModelDown()) as m:
        assert trace not in m._core.recovered_runs.get("failed", {})  # not retried at every start


def _has_judgment(m: Memory, trace: str) -> bool:
    try:
        m.judgments(trace)
        return True
    except Exception:
        return False


def test_a_failed_async_add_is_not_applied_at_the_next_start(tmp_path):
    data = tmp_path / "data"
    trace = str(uuid.uuid4())

    async def failing_add():
        async with AsyncMemory(data_dir=data, graph_backend="none", checkpointer="sqlite", llm=ModelDown()) as m:
            with pytest.raises(Exception):
                await m.add("I live in Berlin and I love sushi", user_id="alice", trace_id=trace)

    asyncio.run(failing_add())
    with Memory(data_dir=data, graph_backend="none", checkpointer="sqlite") as m:  # the model is back
        assert trace not in (m._core.recovered_runs.get("resumed") or [])
        assert m.get_all(user_id="alice")["results"] == []
        assert trace not in _threads(m)
