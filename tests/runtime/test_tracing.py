"""OpenTelemetry traces with the SDK's in-memory exporter: a span per graph run and node, model calls with the
GenAI attributes, search spans, nothing of the tenant's text in the attributes; off (no handler, no exporter
imported) when nothing is configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memoryx import Memory
from memoryx.runtime import tracing

sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_tracer_provider(provider)
    yield exporter
    tracing.use_tracer_provider(None)


def _values(span) -> str:
    return json.dumps({k: str(v) for k, v in span.attributes.items()})


def test_spans_per_run_node_model_call_and_search(spans, tmp_path):
    with Memory(data_dir=tmp_path / "traced") as m:
        added = m.add("I like jazz.", user_id="tracy")
        m.search("what music does tracy like", user_id="tracy")
    done = spans.get_finished_spans()
    by_name = {}
    for s in done:
        by_name.setdefault(s.name, []).append(s)
    add_root = by_name["memoryx_add"][0]
    assert add_root.parent is None and add_root.attributes["memoryx.trace_id"] == added["trace_id"]
    nodes = [s for s in done if s.attributes.get("memoryx.kind") == "node" and s.context.trace_id == add_root.context.trace_id]
    assert {"extract_facts", "judge", "execute_ops"} <= {s.attributes["langgraph.node"] for s in nodes}
    assert all(s.parent is not None for s in nodes)
    chats = [s for s in done if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert chats and all(s.attributes["gen_ai.request.model"] for s in chats)
    assert any(s.context.trace_id == add_root.context.trace_id for s in chats)  # model calls inside the run
    assert all(s.end_time > s.start_time for s in chats)  # the latency
    search_root = by_name["memoryx_search"][0]
    assert search_root.parent is None and search_root.context.trace_id != add_root.context.trace_id
    for s in done:  # no tenant text unless MEMORYX_OTEL_CONTENT
        assert "jazz" not in _values(s) and "tracy" not in _values(s), (s.name, s.attributes)


def test_content_only_when_enabled(spans, tmp_path):
    with Memory(data_dir=tmp_path / "content", otel_content=True) as m:
        m.add("I like jazz.", user_id="tracy")
    root = [s for s in spans.get_finished_spans() if s.name == "memoryx_add"][0]
    assert root.attributes["memoryx.user_id"] == "tracy" and "jazz" in root.attributes["memoryx.input"]


def test_off_when_not_configured(tmp_path):
    code = ("import sys; from memoryx import Memory; from memoryx.runtime import tracing\n"
            f"m = Memory(data_dir={str(tmp_path / 'off')!r}); m.add('I like jazz.', user_id='u'); m.search('jazz', user_id='u')\n"
            "print(m._core.callbacks == [], tracing._provider is None,\n"
            "      not any(k.startswith('opentelemetry.exporter.otlp') for k in sys.modules),\n"
            "      'opentelemetry.sdk.trace.export' not in sys.modules); m.close()")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True"] * 4


def test_otlp_endpoint_exports_over_http(tmp_path):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    paths: list[str] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            paths.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with Memory(data_dir=tmp_path / "otlp", otel_endpoint=f"http://127.0.0.1:{srv.server_port}") as m:
            m.add("I like jazz.", user_id="otto")
        assert tracing._provider is not None
        tracing._provider.force_flush()
        assert "/v1/traces" in paths
    finally:
        tracing._provider.shutdown()
        tracing.use_tracer_provider(None)
        srv.shutdown()
