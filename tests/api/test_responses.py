"""The fields seed responses carry beside mem0's: a search's `total_count` (candidates that passed the filters
before the limit) and each result's `importance`; an add's `facts_count` and `extracted_entities`."""

from __future__ import annotations

from memoryx import Memory
from tests.support import shared_embeddings


def test_search_results_carry_importance_and_the_total_before_the_limit(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        for text in ("I play tennis on Mondays", "I play tennis with my brother", "Tennis is my favourite sport",
                     "I bought a tennis racket", "My tennis coach is called Ana"):
            m.add(text, user_id="ann", infer=False)
        out = m.search("tennis", user_id="ann", limit=2)
        assert len(out["results"]) == 2
        assert out["total_count"] >= 5  # every tennis memory passed; the limit kept two
        stored = {r["id"]: m.get(r["id"])["importance"] for r in out["results"]}
        assert all(isinstance(r["importance"], float) for r in out["results"])
        assert {r["id"]: r["importance"] for r in out["results"]} == stored
        # a filter counts what passed it, not what the scope holds
        assert m.search("tennis", user_id="ann", limit=2, threshold=0.99)["total_count"] == 0
        assert m.search("tennis", user_id="nobody", limit=2)["total_count"] == 0


def test_add_reports_its_facts_and_entities_beside_mem0s_keys(tmp_path):
    with Memory(data_dir=tmp_path / "d", embeddings=shared_embeddings()) as m:  # the embedded graph: entities
        out = m.add("My name is Tom. I live in Berlin and I love sushi.", user_id="tom")
        assert {"results", "relations", "trace_id"} <= set(out)  # mem0's shape stands
        assert out["facts_count"] == 3
        names = {e["name"].lower() for e in out["extracted_entities"]}
        assert {"berlin", "sushi"} <= names, out["extracted_entities"]
        raw = m.add("just a note", user_id="tom", infer=False)
        assert raw["facts_count"] == 1 and raw["extracted_entities"] == []
