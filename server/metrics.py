"""Prometheus metrics of the HTTP server: adds and searches by outcome, latencies, memory counts, and the
design's metrics of the memory itself:

- memory_add_total{event}: memory events written by adds (ADD / UPDATE / DELETE / NONE);
- memory_search_latency_seconds: search latency histogram;
- memory_store_size{layer,memory_type}, memory_compression_ratio, memory_retention_rate (lifecycle/measures.py),
  recomputed at most every settings.metrics_refresh_s (each is a scan of the memories table);
- memory_judgment_latency_seconds: every finished add run's judgment latency, read from the judgment log (so
  runs of every door count), and memory_judgment_accuracy: CORRECT / verified over the last 7 days.

Labels never carry tenant text (no user ids, no memory text). Each app gets its own registry, so several apps
(tests) can live in one process. The alert rules over these names: deploy/prometheus/memoryx-rules.yml.
"""

from __future__ import annotations

import contextlib
import math
import time
from datetime import timedelta
from typing import Any, Callable, Iterator

from fastapi import FastAPI, Request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from memoryx.errors import InvalidInputError, ScopeError, StoreUnavailableError
from memoryx.lifecycle.measures import store_measures
from memoryx.stores.sql.values import utc_now

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_SEARCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
ACCURACY_WINDOW = timedelta(days=7)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self, count_memories: Callable[[], int] | None = None, sql: Callable[[], Any] | None = None,
                 refresh_s: float = 60.0):
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
        # the design's names (seed metrics); the memoryx_* ones above stay for existing dashboards
        self.add_events = Counter("memory_add_total", "Memory events written by add(), by event", ["event"], registry=r)
        self.search_seconds = Histogram("memory_search_latency_seconds", "Memory search latency",
                                        buckets=_SEARCH_BUCKETS, registry=r)
        self.store_size = Gauge("memory_store_size", "Memories in the store by layer and memory type",
                                ["layer", "memory_type"], registry=r)
        self.compression = Gauge("memory_compression_ratio", "Memories written per memory kept (consolidation)", registry=r)
        self.retention = Gauge("memory_retention_rate", "Mean retention exp(-t/S) of the kept memories", registry=r)
        self.judgment_seconds = Histogram("memory_judgment_latency_seconds", "Judgment latency of finished add runs",
                                          buckets=_BUCKETS, registry=r)
        self.accuracy = Gauge("memory_judgment_accuracy", "CORRECT / verified judgments, verified in the last 7 days",
                              registry=r)
        self.accuracy.set(math.nan)
        self._count = count_memories
        self._sql = sql
        self._refresh_s = refresh_s
        self._measured_at = -math.inf
        self._latency_cursor = utc_now()  # runs finished before the server started are not replayed
        self._size_keys: set[tuple[str, str]] = set()

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
            elapsed = time.perf_counter() - start
            hist.observe(elapsed)
            if kind != "add":
                self.search_seconds.observe(elapsed)

    def record_add_result(self, result: dict) -> None:
        for item in (result or {}).get("results", []) or []:
            self.operations.labels(str(item.get("event", "UNKNOWN"))).inc()
            self.add_events.labels(str(item.get("event", "UNKNOWN"))).inc()

    def count_event(self, event: str) -> None:
        self.events.labels(event).inc()

    def render(self) -> bytes:
        if self._count is not None:
            with contextlib.suppress(Exception):
                self.memories.set(self._count())
        if self._sql is not None:
            with contextlib.suppress(StoreUnavailableError):
                self._read_log(self._sql())
        return generate_latest(self.registry)

    def _read_log(self, sql: Any) -> None:
        latencies, latest = sql.run_latencies_since(self._latency_cursor)
        for ms in latencies:
            self.judgment_seconds.observe(ms / 1000.0)
        if latest is not None:
            self._latency_cursor = latest
        if time.monotonic() - self._measured_at < self._refresh_s:
            return
        self._measured_at = time.monotonic()
        verdicts = sql.verdict_counts(utc_now() - ACCURACY_WINDOW)
        verified = sum(verdicts.values())
        self.accuracy.set(verdicts.get("CORRECT", 0) / verified if verified else math.nan)
        measured = store_measures(sql.memory_measure_rows())
        for key in self._size_keys - set(measured["size"]):
            self.store_size.labels(*key).set(0)  # a layer emptied reads 0, not its last size
        for key, n in measured["size"].items():
            self.store_size.labels(*key).set(n)
        self._size_keys |= set(measured["size"])
        self.compression.set(measured["compression_ratio"])
        self.retention.set(measured["retention_rate"])


def count_requests(app: FastAPI, metrics: Metrics) -> None:
    """Count every request by method, route template (not the raw path: ids stay out of the labels) and status."""

    @app.middleware("http")
    async def _count_requests(request: Request, call_next):
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", None) or "unmatched"
        metrics.requests.labels(request.method, path, str(response.status_code)).inc()
        return response
