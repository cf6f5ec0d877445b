"""Feedback on a memory (Python API and mem0's client over real HTTP): stored, counted in
judgment_stats, a VERY_NEGATIVE memory demoted in search; another tenant's memory refused."""

from __future__ import annotations

import os

import pytest

from memoryx import Memory
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.server.app import create_app
from tests.support import ServerThread

os.environ.setdefault("MEM0_TELEMETRY", "False")


def test_feedback_counts_and_ranking(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", feedback_very_negative_penalty=0.9) as m:
        a = m.add("User likes green tea", user_id="u", infer=False)["results"][0]["id"]
        b = m.add("User likes green tea a lot", user_id="u", infer=False)["results"][0]["id"]
        before = [r["id"] for r in m.search("green tea", user_id="u")["results"]]
        top = before[0]
        m.feedback(top, "very_negative", "wrong: the user hates tea")
        other = before[1]
        m.feedback(other, "POSITIVE")
        m.feedback(other, "NEGATIVE", feedback_reason="vague")
        after = m.search("green tea", user_id="u")["results"]
        assert after[-1]["id"] == top and after[-1]["feedback"] == "VERY_NEGATIVE"
        stats = m.judgment_stats(user_id="u")
        assert stats["feedback"] == {"POSITIVE": 1, "NEGATIVE": 1, "VERY_NEGATIVE": 1}
        assert m.judgment_stats(user_id="other")["feedback"]["VERY_NEGATIVE"] == 0
        m.feedback(top, None)  # withdrawn: the latest feedback no longer demotes it
        assert [r["id"] for r in m.search("green tea", user_id="u")["results"]] == before
        assert [r["feedback"] for r in m.services.sql.feedback_rows(top)] == ["VERY_NEGATIVE", None]
        with pytest.raises(InvalidInputError):
            m.feedback(a, "GREAT")
        with pytest.raises(NotFoundError):
            m.feedback("no-such-id", "POSITIVE")


def test_feedback_through_mem0_client(tmp_path):
    from mem0 import MemoryClient

    os.environ["MEM0_DIR"] = str(tmp_path / "mem0-home")
    keys = {"k-alice": ["alice"], "k-bob": ["bob"]}
    with Memory(data_dir=tmp_path / "d", graph_backend="none", api_keys=keys) as m, ServerThread(create_app(memory=m)) as srv:
        mid = m.add("User likes chess", user_id="alice", infer=False)["results"][0]["id"]
        alice = MemoryClient(host=srv.url, api_key="k-alice")
        # mem0ai 1.0.x's feedback() posts, then fails in its own telemetry call (capture_client_event is given
        # one argument too many): the request has gone through when it raises
        with pytest.raises(TypeError, match="capture_client_event"):
            alice.feedback(mid, "VERY_NEGATIVE", "not true")
        assert m.judgment_stats(user_id="alice")["feedback"]["VERY_NEGATIVE"] == 1
        # the same payload over the client's own HTTP session (its auth header): our answer
        out = alice.client.post("/v1/feedback/", json={"memory_id": mid, "feedback": "NEGATIVE",
                                                        "feedback_reason": "not true"}).json()
        assert out["feedback"] == "NEGATIVE" and out["feedback_reason"] == "not true"
        bob = MemoryClient(host=srv.url, api_key="k-bob")
        refused = bob.client.post("/v1/feedback/", json={"memory_id": mid, "feedback": "POSITIVE"})
        assert refused.status_code == 404 and refused.json()["detail"]
        assert m.judgment_stats(user_id="alice")["feedback"]["POSITIVE"] == 0
