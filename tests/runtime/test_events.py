"""The event bus (memoryx.core.events), webhooks (memoryx.runtime.webhooks) against a real local HTTP server, and the
Prometheus counter per event."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fastapi.testclient import TestClient

from memoryx.api.memory import Memory
from memoryx.errors import InvalidInputError
from memoryx.runtime.webhooks import SIGNATURE_HEADER, WebhookDispatcher, verify_signature
from tests.support import make_services

SECRET = "s3cret"


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    services = make_services(tmp_path_factory.mktemp("events"))
    m = Memory(services=services)
    yield m
    m.close()
    services.close()


class _Receiver:
    """A real HTTP server on 127.0.0.1 that records POSTs; answers `fail_first` of them with 500."""

    def __init__(self, fail_first: int = 0):
        self.received: list[tuple[dict, bytes]] = []
        self.fail_left = fail_first
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if outer.fail_left > 0:
                    outer.fail_left -= 1
                    self.send_response(500)
                else:
                    outer.received.append((self.headers, body))  # case-insensitive lookups
                    self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_events_in_order_and_unsubscribe(mem):
    seen: list[tuple[str, str | None]] = []
    off = mem.on("*", lambda p: seen.append((p["event"], p["memory"])))
    only_deletes: list[str] = []
    off_del = mem.on("memory.deleted", lambda p: only_deletes.append(p["memory_id"]))
    try:
        added = mem.add("I keep bees", user_id="eve", infer=False)
        mid = added["results"][0]["id"]
        mem.update(mid, "I keep two hives of bees")
        deleted = mem.delete(mid)
        mem.rollback(deleted["trace_id"])
    finally:
        off()
        off_del()
    assert seen == [("memory.added", "I keep bees"), ("memory.updated", "I keep two hives of bees"),
                    ("memory.deleted", "I keep two hives of bees"), ("memory.rolled_back", "I keep two hives of bees")]
    assert only_deletes == [mid]
    mem.add("after unsubscribing", user_id="eve", infer=False)
    assert len(seen) == 4
    with pytest.raises(InvalidInputError):
        mem.on("memory.exploded", print)


def test_subscriber_failure_never_breaks_an_add(mem, caplog):
    def boom(payload):
        raise RuntimeError("subscriber bug")

    off = mem.on("memory.added", boom)
    try:
        result = mem.add("I run on Sundays", user_id="eve")  # the add graph, offline model
    finally:
        off()
    assert result["results"] and result["results"][0]["event"] == "ADD"
    assert "subscriber bug" in caplog.text


def test_webhook_signed_retried_and_verified(mem):
    rx = _Receiver(fail_first=1)  # the first delivery fails: retried with backoff
    hook = WebhookDispatcher(rx.url, secret=SECRET, max_attempts=3, backoff_s=0.05)
    off = mem.on("memory.added", hook.subscriber)  # not the run's session.end
    try:
        mem.add("I speak Finnish", user_id="frank", infer=False)
        assert hook.drain(10)
    finally:
        off()
        hook.close()
        rx.close()
    assert hook.delivered == 1 and len(rx.received) == 1
    headers, body = rx.received[0]
    assert verify_signature(SECRET, body, headers[SIGNATURE_HEADER])
    assert not verify_signature("wrong", body, headers[SIGNATURE_HEADER])
    payload = json.loads(body)
    assert payload["event"] == "memory.added" and payload["memory"] == "I speak Finnish"
    assert payload["user_id"] == "frank" and payload["trace_id"]


def test_failing_webhook_does_not_block_an_add(mem):
    rx = _Receiver(fail_first=10**6)  # always 500
    hook = WebhookDispatcher(rx.url, secret=SECRET, max_attempts=3, backoff_s=1.0)
    off = mem.on("*", hook.subscriber)
    try:
        started = time.perf_counter()
        mem.add("I collect stamps", user_id="gina", infer=False)
        took = time.perf_counter() - started
    finally:
        off()
        hook.close(timeout=0.1)
        rx.close()
    assert took < 1.0  # three attempts with 1 s + 2 s backoff would take 3 s if the add waited for them
    assert hook.delivered == 0


def test_server_counts_events_and_sends_webhooks(mem):
    rx = _Receiver()
    settings = mem.services.settings.model_copy(update={"webhook_url": rx.url, "webhook_secret": SECRET,
                                                        "webhook_backoff_s": 0.05})
    from memoryx.server.app import create_app

    try:
        with TestClient(create_app(memory=mem, settings=settings)) as client:
            r = client.post("/v1/memories", json={"messages": "I fly kites", "user_id": "hana", "infer": False})
            assert r.status_code == 200, r.text
            deadline = time.time() + 10
            while not rx.received and time.time() < deadline:
                time.sleep(0.05)
            metrics = client.get("/metrics").text
        assert 'memoryx_events_total{event="memory.added"} 1.0' in metrics
        headers, body = rx.received[0]
        assert verify_signature(SECRET, body, headers[SIGNATURE_HEADER])
        assert json.loads(body)["memory"] == "I fly kites"
    finally:
        rx.close()
