"""Contradictions resolved in consolidation: memories of one owner giving one subject and relation incompatible
values; the later event time wins, then confidence, then importance; the loser is superseded with its reason in
the judgment log and a `contradicts` link; the pass's rollback brings it back."""

from __future__ import annotations

from memoryx import Memory
from memoryx.lifecycle.contradictions import contradictions, statement
from tests.support import shared_embeddings


def _said(m, text, day, user="kim"):
    msg = {"role": "user", "content": text, "timestamp": f"2025-{day}T10:00:00+00:00"}
    return m.add([msg], user_id=user, infer=False)["results"][0]["id"]


def test_statements_and_the_order_of_the_rule():
    assert statement("User now lives in Munich (2026-11)") == statement("User lives in munich")
    assert statement("用户不再喜欢咖啡").value == "no" and statement("用户喜欢咖啡").relation == "likes 咖啡"
    assert statement("User went hiking with Leo") is None  # no single-valued relation: never a contradiction
    assert statement("用户叫小明").value == "小明" and statement("用户叫了外卖") is None  # 叫 as "ordered" is no name
    base = {"status": "active", "memory_type": "semantic", "importance": 0.5, "confidence": 0.9}
    a = {**base, "id": "a", "memory": "User works at SAP", "created_at": "2025-01-01T00:00:00"}
    b = {**base, "id": "b", "memory": "User works at Siemens", "created_at": "2025-01-01T00:00:00", "confidence": 0.6}
    c = {**base, "id": "c", "memory": "User works at SAP as an engineer", "created_at": "2025-01-02T00:00:00"}
    [found] = contradictions([a, b])
    assert (found["winner"], found["loser"]) == ("a", "b") and "more confident" in found["reason"]
    [found] = contradictions([{**a, "importance": 0.2}, {**b, "confidence": 0.9, "importance": 0.8}])
    assert (found["winner"], found["loser"]) == ("b", "a") and "more important" in found["reason"]
    # the later statement wins over a more confident older one; a compatible one (SAP / SAP) is no conflict
    later = contradictions([a, {**b, "created_at": "2025-02-01T00:00:00"}, c])
    assert {(x["winner"], x["loser"]) for x in later} == {("b", "c"), ("b", "a")}
    assert contradictions([a, c]) == []
    assert contradictions([a, {**b, "metadata": {"immutable": True}}]) == []


def test_a_pass_supersedes_the_older_statement_links_it_and_rolls_back(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        berlin = _said(m, "User lives in Berlin", "01-10")
        munich = _said(m, "User lives in Munich", "03-02")
        tea = _said(m, "User likes green tea", "01-11")
        no_tea = _said(m, "User no longer likes green tea", "02-20")
        sushi = _said(m, "User likes sushi", "01-12")
        report = m.consolidate(user_id="kim")
        assert report["contradictions"] == 2
        assert m.get(berlin)["status"] == "archived" and m.get(tea)["status"] == "archived"
        assert m.get(munich)["status"] == "active" and m.get(no_tea)["status"] == "active"
        assert m.get(sushi)["status"] == "active"
        found = m.search("where does the user live?", user_id="kim")["results"]
        assert berlin not in [r["id"] for r in found]
        links = {(k["source_id"], k["target_id"], k["relation"]) for k in m.services.sql.memory_links([berlin])}
        assert (munich, berlin, "contradicts") in links
        record = m.judgments(report["trace_id"])
        [c] = [c for c in record["parsed_operations"]["contradictions"] if c["loser"] == berlin]
        assert c["winner"] == munich and c["values"] == ["munich", "berlin"] and "later statement wins" in c["reason"]
        why = m.explain(berlin)["judgments"][-1]["reason"]
        assert "superseded" in why and munich in why
        m.rollback(report["trace_id"])  # back as they were before the pass (staged: no pass had seen them)
        assert m.get(berlin)["status"] == "staged" and m.get(tea)["status"] == "staged"
        assert not m.services.sql.memory_links([berlin])
