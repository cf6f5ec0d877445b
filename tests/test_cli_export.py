"""`memoryx export` then `memoryx import` into another data directory: the same memories answer the same
search (issue 12's round trip, through the installed command); a mem0 export file imports too."""

from __future__ import annotations

import json

from tests.test_cli import run


def test_export_then_import_elsewhere_answers_the_same(tmp_path):
    first, second, dump = tmp_path / "first", tmp_path / "second", tmp_path / "alice.jsonl"
    run(first, "add", "I live in Lisbon and I like green tea.", "--user-id", "alice")
    out = json.loads(run(first, "export", "--user-id", "alice", str(dump), "--json").stdout)
    assert out["records"] >= 3 and dump.exists()

    imported = json.loads(run(second, "import", str(dump), "--json").stdout)
    assert imported["format"] == "memoryx" and imported["memories"] == 2

    def search(data_dir):
        found = json.loads(run(data_dir, "search", "where do I live", "--user-id", "alice", "--json").stdout)
        return [(r["id"], r["memory"]) for r in found["results"]]

    assert search(second) == search(first)
    assert "Lisbon" in search(second)[0][1]


def test_mem0_export_file_imports(tmp_path):
    mem0_export = tmp_path / "mem0.json"
    mem0_export.write_text(json.dumps({"results": [
        {"id": "5b0b4c8e-3a4f-4e4e-9d55-1f0e9c8d7a10", "memory": "Likes hiking in the Alps", "user_id": "bob",
         "categories": ["hobbies"], "created_at": "2025-01-02T10:00:00Z"}]}))
    out = json.loads(run(tmp_path / "data", "import", str(mem0_export), "--json").stdout)
    assert out["format"] == "mem0" and out["memories"] == 1
    listed = json.loads(run(tmp_path / "data", "list", "--user-id", "bob", "--json").stdout)
    assert [m["memory"] for m in listed["results"]] == ["Likes hiking in the Alps"]
