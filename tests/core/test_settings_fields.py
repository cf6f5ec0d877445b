"""Settings are one typed object: a field defined twice in the class body silently replaces the first
(Python keeps the last), which once changed the add graph's entity linking threshold. Guard it."""

from __future__ import annotations

import ast
from pathlib import Path

import memoryx.settings as settings_module


def test_no_setting_is_defined_twice():
    tree = ast.parse(Path(settings_module.__file__).read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings")
    names = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_linking_and_consolidation_thresholds_are_separate():
    s = settings_module.Settings()
    assert s.entity_merge_threshold == 0.9  # add graph: link a new name to an existing entity
    assert s.consolidate_entity_merge_threshold == 0.95  # consolidation: merge two existing entities


def test_embedded_stores_name_their_settings():
    from memoryx.settings import Settings

    embedded = Settings(data_dir="/tmp/x").embedded_stores()
    assert [line.split()[0].split("=")[0] for line in embedded] == [
        "MEMORYX_SQL_URL", "MEMORYX_VECTOR_BACKEND", "MEMORYX_GRAPH_BACKEND", "MEMORYX_CHECKPOINTER"]
    shared = Settings(sql_url="postgresql+psycopg://u@db/m", vector_backend="pgvector",
                      falkordb_url="redis://:pw@graph:6379")
    assert shared.embedded_stores() == []
    assert Settings(sql_url="postgresql+psycopg://u@db/m", vector_backend="pgvector", graph_backend="none",
                    checkpointer="sqlite").embedded_stores()[0].startswith("MEMORYX_CHECKPOINTER=sqlite")
    assert "MEMORYX_QDRANT_URL" in Settings(sql_url="postgresql://u@db/m", vector_backend="qdrant",
                                            qdrant_url=":memory:", graph_backend="none").embedded_stores()[0]
