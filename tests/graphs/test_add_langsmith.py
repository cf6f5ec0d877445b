"""LangSmith tracing of an add run, against a local HTTP server standing in for LangSmith: one child run per
node, tagged with the trace id (and user, model), the judge's inputs, outputs and reasons posted."""

from __future__ import annotations

import email
import http.server
import json
import threading
from collections import defaultdict

import pytest

from tests.support import make_services, run_add

EXPECTED_NODES = ["validate_input", "extract_facts", "retrieve_similar", "judge", "execute_ops", "finalize"]


class _Recorder(http.server.BaseHTTPRequestHandler):
    posts: list[tuple[str, dict, bytes]] = []

    def _reply(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        type(self).posts.append((self.path, dict(self.headers), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PATCH = do_PUT = _reply

    def log_message(self, *args):
        pass


def _runs(posts) -> dict[str, dict]:
    """Runs posted through /runs/multipart (and /runs/batch, /runs), merged by id."""
    runs: dict[str, dict] = defaultdict(dict)
    for path, headers, body in posts:
        if path.startswith("/runs/multipart"):
            msg = email.message_from_bytes(b"Content-Type: " + headers["Content-Type"].encode() + b"\r\n\r\n" + body)
            for part in msg.get_payload():
                name = part.get_param("name", header="content-disposition")
                kind, _, rest = name.partition(".")
                run_id, _, field = rest.partition(".")
                data = json.loads(part.get_payload(decode=True) or b"null")
                if field:
                    runs[run_id][field] = data
                else:
                    runs[run_id].update(data)
        elif path.startswith("/runs/batch"):
            data = json.loads(body)
            for item in (data.get("post") or []) + (data.get("patch") or []):
                runs[item["id"]].update(item)
        elif path.startswith("/runs"):
            item = json.loads(body or b"{}")
            if "id" in item:
                runs[item["id"]].update(item)
    return runs


@pytest.fixture
def fake_langsmith(monkeypatch):
    import langsmith.run_trees as run_trees
    import langsmith.utils as ls_utils

    _Recorder.posts = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
    monkeypatch.setenv("LANGSMITH_PROJECT", "memoryx-tests")
    ls_utils.get_env_var.cache_clear()
    monkeypatch.setattr(run_trees, "_CLIENT", None)
    yield _Recorder
    ls_utils.get_env_var.cache_clear()
    server.shutdown()


def test_add_run_is_traced_with_one_child_per_node(tmp_path, fake_langsmith):
    from langchain_core.tracers.langchain import wait_for_all_tracers
    from langsmith.run_trees import get_cached_client

    from memoryx.graphs.add import builder

    services = make_services(tmp_path)
    try:
        graph = builder.compile()
        run_add(graph, services, "I live in Berlin")
        result = run_add(graph, services, "I moved to Paris")
        trace_id = result["trace_id"]
        wait_for_all_tracers()
        get_cached_client().flush()
    finally:
        services.close()

    runs = _runs(fake_langsmith.posts)
    roots = [r for r in runs.values() if r.get("name") == "memoryx_add" and f"trace_id:{trace_id}" in (r.get("tags") or [])]
    assert len(roots) == 1, sorted({r.get("name") for r in runs.values()})
    root = roots[0]
    assert "user_id:alice" in root["tags"] and "model:offline" in root["tags"]
    assert root["extra"]["metadata"]["trace_id"] == trace_id
    children = {r["name"]: r for r in runs.values() if r.get("parent_run_id") == root["id"]}
    for node in EXPECTED_NODES:
        assert node in children, f"no child run for node {node}: {sorted(children)}"
        assert f"trace_id:{trace_id}" in children[node]["tags"]
    judge_run = children["judge"]
    assert judge_run["inputs"]["candidates"][0]["memory"] == "User lives in Berlin"
    assert judge_run["inputs"]["facts"][0]["text"] == "User now lives in Paris"
    (op,) = judge_run["outputs"]["operations"]
    assert op["event"] == "UPDATE" and op["reason"] and op["old_memory"] == "User lives in Berlin"
    llm_runs = [r for r in runs.values() if r.get("name") == "judge_llm" and r.get("parent_run_id") == judge_run["id"]]
    assert llm_runs and "model:offline" in llm_runs[0]["tags"] and llm_runs[0]["run_type"] == "llm"
    assert json.dumps(llm_runs[0]["outputs"]).count("UPDATE") >= 1
