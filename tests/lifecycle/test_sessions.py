"""session.end means the end of a conversation: once per ended run (end_run, or a consolidation pass that finds
the run idle past MEMORYX_WORKING_MEMORY_TTL_HOURS), never per add; memory.accessed comes once per search with
every hit; a real HTTP receiver gets session.end as a signed webhook."""

from __future__ import annotations

import json
import time

from memoryx.api.memory import Memory
from memoryx.runtime.webhooks import SIGNATURE_HEADER, WebhookDispatcher, verify_signature
from tests.runtime.test_events import SECRET, _Receiver
from tests.support import shared_embeddings


def _memory(tmp_path, **settings):
    return Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings(), **settings)


def _watch(m, event):
    seen: list[dict] = []
    return seen, m.on(event, seen.append)


def test_session_end_once_per_ended_run_never_per_add(tmp_path):
    with _memory(tmp_path) as m:
        ends, off = _watch(m, "session.end")
        m.add("I'm planning a trip to Lisbon", user_id="ann", run_id="chat-1")
        m.add("I'd like a hotel near the river", user_id="ann", run_id="chat-1")
        m.add("just a note", user_id="ann", run_id="chat-1", infer=False)
        assert ends == []  # three adds, the conversation goes on
        closed = m.end_run("chat-1", user_id="ann")
        assert len(ends) == 1
        end = ends[0]
        assert end["reason"] == "end_run" and end["run_id"] == "chat-1" and end["user_id"] == "ann"
        assert end["trace_id"] == closed["trace_id"]
        assert sorted(end["kept"] + end["archived"]) == sorted(closed["kept"] + closed["archived"])
        m.end_run("chat-1", user_id="ann")  # already ended: no second end
        assert len(ends) == 1
        m.add("back again", user_id="ann", run_id="chat-1", infer=False)  # the run goes on: it can end again
        m.end_run("chat-1", user_id="ann")
        assert len(ends) == 2
        off()


def test_a_run_idle_past_the_setting_ends_in_a_consolidation_pass(tmp_path):
    with _memory(tmp_path, working_memory_ttl_hours=2.0) as m:
        ends, off = _watch(m, "session.end")
        m.add("note one", user_id="bo", run_id="r-idle", infer=False)
        m.add("note two", user_id="bo", run_id="r-live", infer=False)
        assert m.consolidate(user_id="bo")["runs_ended"] == []  # nothing idle yet
        assert ends == []
        m.add("note three", user_id="bo", run_id="r-live", infer=False)
        later = time.time() + 3 * 3600
        assert m.consolidate(user_id="bo", now=later, dry_run=True)["runs_ended"] == ["r-idle", "r-live"]
        assert ends == []  # a dry run ends nothing
        report = m.consolidate(user_id="bo", now=later)
        assert sorted(report["runs_ended"]) == ["r-idle", "r-live"]
        assert sorted((e["run_id"], e["reason"]) for e in ends) == [("r-idle", "idle"), ("r-live", "idle")]
        assert all(e["trace_id"] == report["trace_id"] for e in ends)
        assert m.working_memory("r-idle", user_id="bo")["turns"] == []  # the end mark clears the turns
        m.consolidate(user_id="bo", now=later + 3600)
        m.end_run("r-idle", user_id="bo")  # ended by the pass: nothing left to end
        assert len(ends) == 2
        off()


def test_memory_accessed_is_one_event_per_search_with_every_hit(tmp_path):
    with _memory(tmp_path) as m:
        ids = {m.add(t, user_id="cy", infer=False)["results"][0]["id"]
               for t in ("I sail on weekends", "My boat is called Wren", "I sail with my uncle")}
        seen, off = _watch(m, "memory.accessed")
        found = m.search("sailing boat", user_id="cy", limit=3)
        off()
        assert len(seen) == 1
        assert seen[0]["memory_ids"] == [r["id"] for r in found["results"]] and set(seen[0]["memory_ids"]) == ids
        assert seen[0]["user_id"] == "cy"


def test_session_end_reaches_a_real_webhook_receiver(tmp_path):
    rx = _Receiver(fail_first=1)
    hook = WebhookDispatcher(rx.url, secret=SECRET, max_attempts=3, backoff_s=0.05)
    try:
        with _memory(tmp_path) as m:
            off = m.on("session.end", hook.subscriber)
            m.add("hello there", user_id="dee", run_id="call-9", infer=False)
            m.end_run("call-9", user_id="dee")
            assert hook.drain(10)
            off()
    finally:
        hook.close()
        rx.close()
    assert len(rx.received) == 1
    headers, body = rx.received[0]
    assert headers["X-MemoryX-Event"] == "session.end"
    assert verify_signature(SECRET, body, headers[SIGNATURE_HEADER])
    payload = json.loads(body)
    assert payload["run_id"] == "call-9" and payload["reason"] == "end_run" and payload["user_id"] == "dee"
