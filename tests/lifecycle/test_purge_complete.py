"""Purge is complete when it returns: a marker written through every path that stores text (inferred and
verbatim adds, graph entities, the profile, the judgment log, history, episodes, checkpoints, audit findings,
feedback, a consolidation pass, a failed add) is in no file under the data directory the moment purge
answers — the stores still open (SQLite -wal/-shm, the vector shards, FalkorDB's files, logs), through the
Python API and through a server's REST route, after enough writes that the WAL is large."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from memoryx.api.memory import Memory
from tests.support import shared_embeddings

pytestmark = pytest.mark.integration


def _needles(marker: str) -> list[bytes]:
    """The marker as the stores could hold it: UTF-8 / UTF-16 (any letter case: entity names are stored
    lower-cased) and JSON's \\u escapes (ensure_ascii serialisers), upper and lower hex."""
    out = []
    for text in {marker, marker.lower()}:
        out += [text.encode("utf-8"), text.encode("utf-16-le"), text.encode("utf-16-be")]
        escaped = json.dumps(text)[1:-1]
        if escaped != text:
            out += [escaped.encode("ascii"), escaped.upper().replace("\\U", "\\u").encode("ascii")]
    return out


def files_with(root: Path, markers: list[str]) -> list[str]:
    found = []
    needles = {n.lower() for m in markers for n in _needles(m)}
    for f in root.rglob("*"):
        if not f.is_file():
            continue
        try:
            data = f.read_bytes().lower()
        except OSError:
            continue
        # the vector shards' files are sparse (32 MB, mostly zeros): the runs of zeros go before the search
        # (no needle holds two zero bytes in a row, not even UTF-16)
        data = b"\x01".join(p for p in re.split(rb"\x00{8,}", data) if p)
        if any(n in data for n in needles):
            found.append(str(f.relative_to(root)))
    return sorted(found)


def _memory(data: Path, **overrides) -> Memory:
    settings = dict(data_dir=data, checkpointer="sqlite", embeddings=shared_embeddings(), graph_backend="falkordb",
                    keep_finished_checkpoints=True, episodes=True, profiles=True, add_time_budget_s=3600)
    return Memory(**{**settings, **overrides})


def _write_everywhere(m: Memory, marker: str, marker_cn: str) -> None:
    """The marker through every path that stores text, for alice; bob's memories stay beside them."""
    m.add(f"I work at {marker}corp in Berlin and my friend {marker}son likes tennis.", user_id="alice",
          metadata={"note": f"{marker} note"})
    m.add(f"我在{marker_cn}公司工作，我喜欢寿司。", user_id="alice")
    m.add(f"Verbatim {marker} line", user_id="alice", infer=False)
    # 40 writes: a large WAL (~3.5 MB for memoryx.db). The padding is short because alice is multilingual by now:
    # every item and its windows cost a multilingual embedding, here and again when consolidation re-projects them.
    raw = m.add_many([{"messages": f"bulk {i} {marker} " + "x" * 100, "user_id": "alice"} for i in range(40)],
                     infer=False)
    assert all(not r.get("error") for r in raw)
    first = m.get_all(user_id="alice")["results"][0]
    m.update(first["id"], f"I now work at {marker}works")  # history keeps the old text
    m.feedback(first["id"], "NEGATIVE", reason=f"wrong about {marker}")
    doomed = m.add(f"My locker code is {marker}42", user_id="alice")["results"]
    for r in doomed:
        m.delete(r["id"])  # add then delete: an audit finding
    m.audit(user_id="alice")
    m.consolidate(user_id="alice")
    services, graph_llm = m.services, m.services.graph_llm
    services.graph_llm = FakeListChatModel(responses=["nope"])  # the graph model fails after the write
    try:
        with pytest.raises(Exception):  # a failed add: its judgment (kept, marked failed) quotes the input
            m.add(f"I live in {marker}ville", user_id="alice")
    finally:
        services.graph_llm = graph_llm
    m.add("I live in Paris and I love cheese.", user_id="bob")


@pytest.mark.parametrize("via", ["python", "rest"])
def test_no_file_holds_a_purged_marker_when_purge_returns(tmp_path, via):
    data = tmp_path / "data"
    marker = f"Qz{uuid.uuid4().hex[:8]}mark"
    marker_cn = f"钥匙{uuid.uuid4().hex[:6]}"
    m = _memory(data)
    try:
        _write_everywhere(m, marker, marker_cn)
        assert files_with(data, [marker]), "the marker was written somewhere"
        if via == "python":
            m.purge(user_id="alice")
        else:
            from memoryx.server.app import create_app

            with TestClient(create_app(memory=m)) as client:
                reply = client.post("/v1/purge", json={"user_id": "alice"})
                assert reply.status_code == 200, reply.text
        left = files_with(data, [marker, marker_cn])
        assert left == [], left  # the stores are still open: this is the moment purge answered
        assert m.get_all(user_id="alice")["results"] == []
        assert m.get_all(user_id="bob")["results"]
    finally:
        m.close()
    assert files_with(data, [marker, marker_cn]) == []
