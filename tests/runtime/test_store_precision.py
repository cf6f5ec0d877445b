"""The local encoder's precision, recorded by the store (memoryx.runtime.store_precision): a new store records the
precision its vectors are written with, MEMORYX_EMBEDDING_PRECISION=auto follows the record, a store written before
the record is fp32, and a setting that contradicts the record is refused at open without losing anything.

Real parts: the embedded stores through the public API, SQLite and PostgreSQL for the record itself."""

from __future__ import annotations

import sqlite3
import uuid

import pytest

from memoryx.api.memory import Memory
from memoryx.errors import InvalidInputError
from memoryx.models.embeddings import chosen_precision
from memoryx.runtime.store_precision import PRECISION_KEY, precision_for_store
from memoryx.settings import Settings
from memoryx.stores.sql import SCHEMA_VERSION, SQLStore

pytestmark = pytest.mark.integration


def _settings(tmp_path, **overrides) -> Settings:
    return Settings(**{"data_dir": tmp_path / "data", "graph_backend": "none", "checkpointer": "none", **overrides})


def test_a_new_store_records_int8_auto_follows_it_and_a_contradiction_is_refused(tmp_path):
    with Memory(_settings(tmp_path)) as m:
        assert m.services.embeddings.precision == "int8" and m.services.settings is m.settings
        mid = m.add("I keep bees in Devon", user_id="u", infer=False)["results"][0]["id"]
        assert m.services.sql.store_setting(PRECISION_KEY) == "int8"
    with pytest.raises(InvalidInputError, match="written by the int8 encoder") as refused:
        Memory(_settings(tmp_path, embedding_precision="fp32"))
    assert "Unset it" in str(refused.value) and "memoryx export" in str(refused.value)
    for precision in ("auto", "int8"):  # the refused open lost nothing, and both settings read the store
        with Memory(_settings(tmp_path, embedding_precision=precision)) as m:
            assert m.services.embeddings.precision == "int8"
            assert m.search("which insects do I keep?", user_id="u", limit=1)["results"][0]["id"] == mid


def test_an_encoder_given_to_memory_is_checked_and_recorded_by_its_own_precision(tmp_path):
    from memoryx.models.embeddings import LocalMiniLMEmbeddings

    fp32 = LocalMiniLMEmbeddings(precision="fp32", cache_dir=Settings().resolved_embedding_cache_dir())
    with Memory(_settings(tmp_path), embeddings=fp32) as m:  # the settings say auto: the encoder given wins
        m.add("my bike is a green Brompton", user_id="u", infer=False)
        assert m.services.sql.store_setting(PRECISION_KEY) == "fp32"
    with Memory(_settings(tmp_path)) as m:  # built from the settings: it follows the record
        assert m.services.embeddings.precision == "fp32"
    int8 = LocalMiniLMEmbeddings(precision="int8", cache_dir=Settings().resolved_embedding_cache_dir())
    with pytest.raises(InvalidInputError, match="the embeddings given run at int8") as refused:
        Memory(_settings(tmp_path), embeddings=int8)
    assert "precision='fp32'" in str(refused.value)


def test_a_store_without_a_record_but_with_memories_is_fp32(tmp_path):
    with Memory(_settings(tmp_path, embedding_precision="fp32")) as m:
        m.add("my sister lives in Lyon", user_id="u", infer=False)
    with sqlite3.connect(tmp_path / "data" / "memoryx.db") as db:  # as a store written before the record
        db.execute("DELETE FROM store_settings")
    with Memory(_settings(tmp_path)) as m:
        assert m.services.embeddings.precision == "fp32"
        assert m.services.sql.store_setting(PRECISION_KEY) == "fp32"
        assert "Lyon" in m.search("where does my sister live?", user_id="u", limit=1)["results"][0]["memory"]


def test_only_the_local_encoder_has_a_precision_and_torch_means_fp32(tmp_path):
    assert chosen_precision(Settings(embedding_runtime="torch")) == "fp32"
    assert chosen_precision(Settings()) == "int8" and chosen_precision(Settings(embedding_precision="fp32")) == "fp32"
    sql = SQLStore(f"sqlite:///{tmp_path / 'e5.db'}")
    try:
        e5 = Settings(embedding_model="local:multilingual-e5-small")
        assert precision_for_store(e5, sql) is None and sql.store_setting(PRECISION_KEY) is None
        torch = Settings(embedding_runtime="torch")
        assert precision_for_store(torch, sql) == "fp32" and sql.store_setting(PRECISION_KEY) == "fp32"
        assert torch.embedding_precision == "auto"  # the caller's settings are left as they are
    finally:
        sql.close()


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_a_store_setting_is_recorded_once_and_outlives_a_reset(engine, request):
    url = request.getfixturevalue("sqlite_url" if engine == "sqlite" else "pg_url")
    key = f"test-{uuid.uuid4().hex[:8]}"  # the PostgreSQL database is shared by the session
    first, second = SQLStore(url), SQLStore(url)
    try:
        assert first.store_setting(key) is None
        assert first.record_store_setting(key, "int8") == "int8"
        assert second.record_store_setting(key, "fp32") == "int8"  # the first writer's value stays
        first.reset()
        assert second.store_setting(key) == "int8"
    finally:
        first.close()
        second.close()


def test_a_version_9_database_gains_the_settings_table(sqlite_url):
    store = SQLStore(sqlite_url)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE store_settings")
        conn.exec_driver_sql("DELETE FROM schema_version WHERE version >= 10")
    store.close()
    store = SQLStore(sqlite_url)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 10
        assert store.record_store_setting(PRECISION_KEY, "fp32") == "fp32"
    finally:
        store.close()
