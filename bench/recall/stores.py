"""Kept stores of the recall harness: open one as the harness ingested it, and read its questions.

    import sys; sys.path.insert(0, "bench/recall")
    from stores import open_store, load_questions
    m = open_store("bench/recall/.stores/lme-dev")          # a memoryx.Memory, the ingest's settings
    for q in load_questions("bench/recall/.stores/lme-dev"):
        m.search(q["query"], user_id=q["user_id"], group_id=q.get("group_id"), now=q["now"], limit=30)

A set directory holds the store (SQLite, embedded vectors, graph), `store.json` (which set, the settings it was
ingested with) and `questions.jsonl` (one question a line: set, split, qid, qtype, query, user_id, group_id, now,
gold_ids: the ids of the memories that are its evidence, gold_sessions for LongMemEval, expected for lives).

Searches here do not count as accesses (search_record_access off): a kept store answers the same way on every
rerun, which fitting and re-ranking need; everything else is the defaults.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

DEFAULT_STORES = Path(__file__).resolve().parent / ".stores"
# the shared sets are added with infer=False, which writes no graph; the lives run the add graph with the
# offline model and the embedded graph on, as a user without an API key would
SET_SETTINGS = {"locomo-dev": {"graph_backend": "none"}, "lme-dev": {"graph_backend": "none"},
                "lme-val": {"graph_backend": "none"}, "lives": {}}
READ_ONLY = {"search_record_access": False}


def settings_for(set_name: str, set_dir: Path):
    from memoryx.settings import Settings

    return Settings(data_dir=Path(set_dir), **SET_SETTINGS[set_name], **READ_ONLY)


def open_store(set_dir: str | Path):
    """The kept store of `set_dir` as a Memory with the settings it was ingested with (close it when done)."""
    from memoryx import Memory

    set_dir = Path(set_dir)
    meta = json.loads((set_dir / "store.json").read_text())
    return Memory(settings_for(meta["set"], set_dir), llm="offline")


def load_questions(set_dir: str | Path) -> list[dict]:
    path = Path(set_dir) / "questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_questions(set_dir: Path, questions: list[dict]) -> None:
    with (Path(set_dir) / "questions.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)


def mark(set_dir: Path, set_name: str, **info) -> None:
    """store.json: which set the directory holds (open_store reads it), and how it was ingested."""
    meta = {"set": set_name, "settings": {**SET_SETTINGS[set_name], **READ_ONLY}, **info}
    (Path(set_dir) / "store.json").write_text(json.dumps(meta, indent=1))


def is_kept(set_dir: Path) -> bool:
    return (Path(set_dir) / "store.json").exists() and (Path(set_dir) / "questions.jsonl").exists()
