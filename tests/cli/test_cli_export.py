"""`memoryx export` then `memoryx import` into another data directory: the same memories answer the same
search (the round trip through the CLI's own entry point, in-process: each subprocess would load
the embedding model again); a mem0 export file imports too."""

from __future__ import annotations

import json

import pytest

from memoryx.cli import main
from memoryx.settings import get_settings


@pytest.fixture
def run(monkeypatch, capsys):
    """`memoryx <args> --json` on a data directory, in this process; returns the parsed output."""

    def invoke(data_dir, *args: str):
        monkeypatch.setenv("MEMORYX_DATA_DIR", str(data_dir))
        get_settings.cache_clear()
        capsys.readouterr()
        assert main([*args, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    return invoke


def test_export_then_import_elsewhere_answers_the_same(tmp_path, run):
    first, second, dump = tmp_path / "first", tmp_path / "second", tmp_path / "alice.jsonl"
    run(first, "add", "I live in Lisbon and I like green tea.", "--user-id", "alice")
    out = run(first, "export", "--user-id", "alice", str(dump))
    assert out["records"] >= 3 and dump.exists()

    imported = run(second, "import", str(dump))
    assert imported["format"] == "memoryx" and imported["memories"] == 2

    def search(data_dir):
        found = run(data_dir, "search", "where do I live", "--user-id", "alice")
        return [(r["id"], r["memory"]) for r in found["results"]]

    assert search(second) == search(first)
    assert "Lisbon" in search(second)[0][1]


def test_mem0_export_file_imports(tmp_path, run):
    mem0_export = tmp_path / "mem0.json"
    mem0_export.write_text(json.dumps({"results": [
        {"id": "5b0b4c8e-3a4f-4e4e-9d55-1f0e9c8d7a10", "memory": "Likes hiking in the Alps", "user_id": "bob",
         "categories": ["hobbies"], "created_at": "2025-01-02T10:00:00Z"}]}))
    out = run(tmp_path / "data", "import", str(mem0_export))
    assert out["format"] == "mem0" and out["memories"] == 1
    listed = run(tmp_path / "data", "list", "--user-id", "bob")
    assert [m["memory"] for m in listed["results"]] == ["Likes hiking in the Alps"]
