"""No acknowledged write is undone: an add that fails late (its graph model answers garbage after its memories
were committed) is undone, while a second add of the same user, answered while the first was still running,
UPDATEd one of the first run's memories. The undo keeps that memory as the second run left it (SQL, vector
store and graph each checked), removes what only the failed run wrote, and the failed run's judgment names
what it could not undo. 50 interleavings, each on a user of its own, real stores (SQLite, embedded Qdrant,
embedded FalkorDB); the models are the offline one and a gate that holds the first run's graph step."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from memoryx import Memory
from memoryx.core.scope import Scope
from memoryx.errors import MemoryXError
from memoryx.models.offline import OfflineChatModel
from tests.support import shared_embeddings

pytestmark = pytest.mark.integration
RUNS = int(os.environ.get("MEMORYX_UNDO_RUNS", "50"))


class Gate(OfflineChatModel):
    """The offline model, except for a request about the failing run's word: that one waits until the test
    opens the gate, then answers garbage (so the failing run is still running while the other add runs)."""

    word: str = "Lisbon"
    holding: Any = None  # threading.Event: the failing run reached its graph step
    release: Any = None  # threading.Event: the other add is done

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        text = " ".join(str(m.content) for m in messages)
        if self.word in text and self.holding is not None:
            self.holding.set()
            self.release.wait(120)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="I am not JSON at all"))])
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def _live(m: Memory, user: str) -> dict[str, str]:
    return {r["id"]: r["memory"] for r in m.services.sql.list_memories(Scope(user_id=user), limit=None)}


def test_a_failed_add_never_undoes_a_later_acknowledged_update(tmp_path):
    gate = Gate()
    with Memory(data_dir=tmp_path / "d", graph_backend="falkordb", checkpointer="sqlite", graph_llm=gate,
                embeddings=shared_embeddings(), profiles=True, add_time_budget_s=3600) as m:
        failures: list[str] = []
        for i in range(RUNS):
            user = f"u{i}"
            gate.holding, gate.release = threading.Event(), threading.Event()
            caught: list[BaseException] = []

            def failing(user=user):
                try:
                    m.add("I live in Lisbon and I work at Initech.", user_id=user, trace_id=f"fail-{user}")
                except MemoryXError as exc:
                    caught.append(exc)

            first = threading.Thread(target=failing)
            first.start()
            assert gate.holding.wait(120), "the failing run never reached its graph step"
            written = _live(m, user)  # what the failing run committed before its graph step
            home = next(mid for mid, text in written.items() if "Lisbon" in text)
            later = m.add("I moved to Porto.", user_id=user)  # acknowledged while the first run still runs
            gate.release.set()
            first.join(180)
            events = {(r["event"], r["id"]) for r in later["results"]}
            if ("UPDATE", home) not in events:
                failures.append(f"{user}: the second add did not update the home memory: {later['results']}")
                continue
            if len(caught) != 1:
                failures.append(f"{user}: the first add did not fail: {caught}")
                continue
            live = _live(m, user)
            if "Porto" not in live.get(home, ""):
                failures.append(f"{user}: SQL lost the acknowledged update: {live}")
            if any("Initech" in t for t in live.values()):
                failures.append(f"{user}: what only the failed run wrote was kept: {live}")
            scope, vectors, graph = Scope(user_id=user), m.services.vectors, m.services.graph
            hits = {h.id: h.payload for h in vectors.keyword_search("Porto", scope, limit=10)}
            if home not in hits or vectors.count_memories(scope) != len(live):
                failures.append(f"{user}: the vector store does not hold what SQL holds: {hits} "
                                f"{vectors.count_memories(scope)} points for {len(live)} memories")
            valid = m.services.sql.list_relations(scope)
            if graph.counts(scope)["valid_relations"] != len(valid):
                failures.append(f"{user}: the graph does not hold SQL's relations: {graph.counts(scope)} "
                                f"vs {len(valid)}")
            if later["relations"]["added_entities"] and not any("porto" in str(r).lower() for r in valid):
                failures.append(f"{user}: the later run's relation is gone: {valid}")
            record = m.judgments(f"fail-{user}")
            if record["status"] != "failed" or home not in (record.get("error_message") or ""):
                failures.append(f"{user}: the failed run's judgment does not name what it kept: "
                                f"{record.get('error_message')}")
            if home not in str(caught[0]):
                failures.append(f"{user}: the caller is not told what was kept: {caught[0]}")
        assert not failures, "\n".join(failures[:10]) + f"\n({len(failures)} failures in {RUNS} runs)"
