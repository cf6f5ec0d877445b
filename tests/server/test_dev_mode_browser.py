"""Local development mode (no API keys) is safe from the browser: a page the user visits can send simple
cross-site POSTs (text/plain, forms, a body without a Content-Type) to localhost, and DNS rebinding can aim
its own host name at it. Writes take only application/json (415, nothing written), and the Host header must
be an allowed one (400): localhost names and the bound address unless --allowed-hosts says otherwise."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.cli.parser import build_parser
from memoryx.server.app import create_app
from memoryx.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("dev"), graph_backend="none", api_keys={}) as m:
        m.add("Alice lives in Berlin", user_id="alice", agent_id="bot", run_id="r1", infer=False)
        yield m


@pytest.fixture(scope="module")
def dev(memory):
    with TestClient(create_app(memory=memory), base_url="http://localhost:8000") as c:
        yield c


def _count(memory) -> int:
    return len(memory.get_all(user_id="alice", limit=1000)["results"])


@pytest.mark.parametrize("path, body, content_type", [
    ("/graphs/add/invoke", '{"input": {"messages": "I like tea", "user_id": "alice"}}', "text/plain"),
    ("/graphs/add/invoke", "input=x", "application/x-www-form-urlencoded"),
    ("/v1/memories", '{"messages": "I like tea", "user_id": "alice", "infer": false}', "text/plain;charset=UTF-8"),
    ("/v1/memories/", '{"messages": "I like tea", "user_id": "alice", "infer": false}', "multipart/form-data; boundary=x"),
    ("/v1/memories", '{"messages": "I like tea", "user_id": "alice", "infer": false}', None),
    ("/v1/runs/r1/end", "", None),
    ("/v1/purge", '{"user_id": "alice"}', "text/plain"),
])
def test_cross_site_writes_are_refused(dev, memory, path, body, content_type):
    before = _count(memory)
    headers = {"Content-Type": content_type} if content_type else {}
    r = dev.post(path, content=body.encode(), headers=headers)
    assert r.status_code == 415 and "application/json" in r.json()["error"]["message"], r.text
    assert _count(memory) == before
    assert all(m["status"] != "archived" for m in memory.get_all(user_id="alice", limit=1000)["results"])


def test_json_writes_and_reads_work(dev, memory):
    r = dev.post("/v1/memories", json={"messages": "I like green tea", "user_id": "alice", "infer": False})
    assert r.status_code == 200, r.text
    assert dev.get("/v1/memories", params={"user_id": "alice"}).status_code == 200
    r = dev.post("/v1/memories", content=b'{"messages": "I like oolong", "user_id": "alice", "infer": false}',
                 headers={"Content-Type": "Application/JSON; charset=utf-8"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("host", ["evil.example", "attacker.example:8000", "127.0.0.1.nip.io", "localhost.evil.example"])
def test_dns_rebinding_hosts_are_refused(dev, memory, host):
    before = _count(memory)
    assert dev.get("/v1/memories", params={"user_id": "alice"}, headers={"Host": host}).status_code == 400
    r = dev.post("/v1/memories", json={"messages": "x", "user_id": "alice", "infer": False}, headers={"Host": host})
    assert r.status_code == 400 and "--allowed-hosts" in r.json()["error"]["message"]
    assert dev.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Host": host}).status_code == 400
    assert _count(memory) == before


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000"])
def test_local_hosts_are_served(dev, host):
    assert dev.get("/v1/memories", params={"user_id": "alice"}, headers={"Host": host}).status_code == 200


def test_allowed_hosts_setting_and_bound_address(memory):
    app = create_app(memory=memory, bound_host="192.0.2.7")
    with TestClient(app) as c:
        assert c.get("/healthz", headers={"Host": "192.0.2.7:8000"}).status_code == 200
        assert c.get("/healthz", headers={"Host": "evil.example"}).status_code == 400
    settings = Settings(data_dir=memory.settings.data_dir, api_keys={}, allowed_hosts=["memory.example.org"])
    with TestClient(create_app(memory=memory, settings=settings)) as c:
        assert c.get("/healthz", headers={"Host": "memory.example.org"}).status_code == 200
        assert c.get("/healthz", headers={"Host": "localhost"}).status_code == 400
    keyed = Settings(data_dir=memory.settings.data_dir, api_keys={"k": ["alice"]})
    with TestClient(create_app(memory=memory, settings=keyed)) as c:  # a key guards it: any host
        assert c.get("/healthz", headers={"Host": "memory.example.org"}).status_code == 200
    args = build_parser().parse_args(["serve", "--allowed-hosts", "a.example,b.example"])
    assert args.allowed_hosts == "a.example,b.example"
