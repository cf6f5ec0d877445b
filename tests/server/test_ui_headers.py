"""The review page is served with a strict Content-Security-Policy (own files only, no inline script or
style, no framing), X-Frame-Options DENY, nosniff and no referrer; /metrics is an admin key's only."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.server.app import create_app

KEYS = {"k-alice": ["alice"], "k-admin": {"admin": True}}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("ui-headers"), graph_backend="none", api_keys=KEYS) as m:
        with TestClient(create_app(memory=m)) as c:
            yield c


@pytest.mark.parametrize("path", ["/ui/", "/ui/app.js", "/ui/style.css", "/ui/missing.html"])
def test_page_headers(client, path):
    r = client.get(path)
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"


def test_metrics_are_an_admin_keys_only(client):
    client.post("/v1/memories", json={"messages": "I like tea", "user_id": "alice", "infer": False},
                headers={"X-API-Key": "k-alice"})
    refused = client.get("/metrics", headers={"X-API-Key": "k-alice"})
    assert refused.status_code == 403 and "alice" not in refused.text
    assert "memoryx_adds_total" in client.get("/metrics", headers={"X-API-Key": "k-admin"}).text
