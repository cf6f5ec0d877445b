"""Prometheus metrics of the HTTP server: adds and searches by outcome, latencies, memory counts.

Each app gets its own registry, so several apps (tests) can live in one process.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterator

from fastapi import FastAPI, Request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from memoryx.errors import InvalidInputError, ScopeError, StoreUnavailableError

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self, count_memories: Callable[[], int] | None = None):
        self.registry = CollectorRegistry()
        r = self.registry
        self.adds = Counter("memoryx_adds_total", "add() calls by outcome", ["outcome"], registry=r)
        self.searches = Counter("memoryx_searches_total", "search() calls by outcome", ["outcome"], registry=r)
        self.add_latency = Histogram("memoryx_add_latency_seconds", "Latency of add()", buckets=_BUCKETS, registry=r)
        self.search_latency = Histogram("memoryx_search_latency_seconds", "Latency of search()", buckets=_BUCKETS, registry=r)
        self.requests = Counter("memoryx_http_requests_total", "HTTP requests by route and status", ["method", "route", "status"], registry=r)
        self.memories = Gauge("memoryx_memories", "Live memories in the system of record", registry=r)
        self.operations = Counter("memoryx_memory_events_total", "Memory events written by add()", ["event"], registry=r)
        self.events = Counter("memoryx_events_total", "Memory events published on the event bus (memoryx.core.events), any path", ["event"], registry=r)
        self._count = count_memories

    @contextlib.contextmanager
    def track(self, kind: str) -> Iterator[None]:
        counter, hist = (self.adds, self.add_latency) if kind == "add" else (self.searches, self.search_latency)
        start = time.perf_counter()
        try:
            yield
        except Exception as exc:
            if isinstance(exc, (InvalidInputError, ScopeError)):
                counter.labels("invalid").inc()
            elif isinstance(exc, StoreUnavailableError):
                counter.labels("unavailable").inc()
            else:
                counter.labels("error").inc()
            raise
        else:
            counter.labels("ok").inc()
        finally:
            hist.observe(time.perf_counter() - start)

    def record_add_result(self, result: dict) -> None:
        for item in (result or {}).get("results", []) or []:
            self.operations.labels(str(item.get("event", "UNKNOWN"))).inc()

    def count_event(self, event: str) -> None:
        self.events.labels(event).inc()

    def render(self) -> bytes:
        if self._count is not None:
            with contextlib.suppress(Exception):
                self.memories.set(self._count())
        return generate_latest(self.registry)


def count_requests(app: FastAPI, metrics: Metrics) -> None:
    """Count every request by method, route template (not the raw path: ids stay out of the labels) and status."""

    @app.middleware("http")
    async def _count_requests(request: Request, call_next):
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", None) or "unmatched"
        metrics.requests.labels(request.method, path, str(response.status_code)).inc()
        return response
