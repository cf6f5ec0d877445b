"""Webhooks: memory events (memoryx.core.events) POSTed to a URL from a background thread.

The subscriber only puts the event on a bounded queue, so a write never waits for the network; a full queue
drops the event (logged) rather than blocking. One worker thread delivers in order: the JSON body, signed
with HMAC-SHA256 over the exact body bytes (`X-MemoryX-Signature: sha256=<hex>`, with the event name in
`X-MemoryX-Event`), retried with exponential backoff (settings.webhook_max_attempts, webhook_backoff_s) on a
connection error or a non-2xx answer, then dropped and logged. A receiver checks the signature with
`verify_signature(secret, body, header)`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from typing import Callable

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-MemoryX-Signature"
EVENT_HEADER = "X-MemoryX-Event"


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is the signature of `body` under `secret` (constant-time comparison)."""
    return bool(header) and hmac.compare_digest(sign(secret, body), header)


class WebhookDispatcher:
    """A bounded queue and one delivery thread. `subscriber` goes on an EventBus (`bus.on("*", ...)`)."""

    def __init__(self, url: str, *, secret: str | None = None, max_attempts: int = 5, backoff_s: float = 0.5,
                 timeout_s: float = 5.0, queue_size: int = 10_000):
        self.url, self.secret = url, secret
        self.max_attempts, self.backoff_s, self.timeout_s = max_attempts, backoff_s, timeout_s
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._stop = threading.Event()
        self.delivered = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._work, name="memoryx-webhooks", daemon=True)
        self._thread.start()

    @classmethod
    def from_settings(cls, settings) -> "WebhookDispatcher | None":
        if not settings.webhook_url:
            return None
        return cls(settings.webhook_url, secret=settings.webhook_secret, max_attempts=settings.webhook_max_attempts,
                   backoff_s=settings.webhook_backoff_s, timeout_s=settings.webhook_timeout_s,
                   queue_size=settings.webhook_queue_size)

    def subscriber(self, payload: dict) -> None:
        try:
            self._queue.put_nowait(payload)
        except queue.Full:
            self.dropped += 1
            log.error("webhook queue full (%d events): %s for memory %s dropped", self._queue.maxsize,
                      payload.get("event"), payload.get("memory_id"))

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                payload = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                self._deliver(payload)
            finally:
                self._queue.task_done()

    def _deliver(self, payload: dict) -> None:
        body = json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")
        headers = {"Content-Type": "application/json", EVENT_HEADER: str(payload.get("event"))}
        if self.secret:
            headers[SIGNATURE_HEADER] = sign(self.secret, body)
        wait = self.backoff_s
        for attempt in range(1, self.max_attempts + 1):
            try:
                req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - the configured URL
                    if 200 <= resp.status < 300:
                        self.delivered += 1
                        return
                    problem = f"HTTP {resp.status}"
            except urllib.error.HTTPError as exc:
                problem = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                problem = repr(exc)
            if attempt < self.max_attempts and not self._stop.wait(wait):
                log.warning("webhook %s attempt %d/%d failed (%s); retrying in %.1fs", payload.get("event"),
                            attempt, self.max_attempts, problem, wait)
                wait *= 2
            elif attempt < self.max_attempts:
                break  # stopping: no more waiting
        self.dropped += 1
        log.error("webhook %s for memory %s dropped after %d attempts", payload.get("event"),
                  payload.get("memory_id"), self.max_attempts)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every queued event was delivered or dropped (tests, shutdown). True when empty."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.02)
        return not self._queue.unfinished_tasks

    def close(self, timeout: float = 5.0) -> None:
        self.drain(timeout)
        self._stop.set()
        self._thread.join(timeout)


def attach_server_events(bus, settings, count_event: Callable[[str], None] | None = None) -> Callable[[], None]:
    """What the HTTP server hangs on the event bus: the Prometheus counter per event and, when
    settings.webhook_url is set, the webhook dispatcher. Returns the function that detaches and stops both."""
    handles = []
    if count_event is not None:
        handles.append(bus.on("*", lambda p: count_event(p["event"])))
    dispatcher = WebhookDispatcher.from_settings(settings)
    if dispatcher is not None:
        handles.append(bus.on("*", dispatcher.subscriber))

    def detach() -> None:
        for off in handles:
            off()
        if dispatcher is not None:
            dispatcher.close()

    detach.dispatcher = dispatcher  # type: ignore[attr-defined] - tests drain it
    return detach
