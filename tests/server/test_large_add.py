"""A long conversation in one add is answered with what happened: 1,000 messages (within the limits) are
written and answered 200, not written and answered 503 (the profile step once built a SQL expression deeper
than SQLite takes, after the memories were in)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memoryx.server.app import create_app

pytestmark = pytest.mark.integration


def test_a_thousand_message_add_is_answered_as_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYX_DATA_DIR", str(tmp_path / "data"))
    messages = [{"role": "user", "content": f"I like tea number {i}"} for i in range(1000)]
    with TestClient(create_app()) as client:
        answer = client.post("/v1/memories", json={"messages": messages, "user_id": "u1"})
        assert answer.status_code == 200, answer.text
        added = [r for r in answer.json()["results"] if r["event"] == "ADD"]
        listed = client.get("/v1/memories", params={"user_id": "u1", "limit": 1000}).json()["results"]
        assert len(added) == len(listed) >= 1000
        assert len(client.get("/v1/profiles/u1").json()["preferences"]) == 1000  # the step that failed
