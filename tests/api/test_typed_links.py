"""Typed memory links: the closed set (causes, follows, part_of, contradicts, supports, same_topic), words in
three languages stored as their type, an unknown word refused by the agents' tool with the set named, and
search following a link one hop. Old free-text links are typed by the schema migration."""

from __future__ import annotations

import sqlite3

import pytest

from memoryx import InvalidInputError, Memory
from memoryx.api.tools import make_memory_tools
from memoryx.core.link_types import LINK_TYPES, link_type
from memoryx.core.scope import Scope


@pytest.mark.unit
def test_words_name_types_in_three_languages():
    assert LINK_TYPES == ("causes", "follows", "part_of", "contradicts", "supports", "same_topic")
    assert [link_type(w) for w in ("led to", "因为", "だから", "then", "然后", "part of", "矛盾", "based on",
                                   "相关", "Same Topic")] == \
        ["causes", "causes", "causes", "follows", "follows", "part_of", "contradicts", "supports", "same_topic",
         "same_topic"]
    with pytest.raises(InvalidInputError, match="same_topic"):
        link_type("is vaguely reminiscent of")


def test_tools_write_typed_links_and_search_follows_them(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        tired = m.add("I was exhausted after the night shift", user_id="ann", infer=False)["results"][0]["id"]
        gym = m.add("I skipped the climbing gym on Friday", user_id="ann", infer=False)["results"][0]["id"]
        tools = {t.name: t for t in make_memory_tools(m, user_id="ann")}
        assert "causes" in tools["link_memories"].invoke({"source_memory_description": tired, "target_memory_description": gym, "relation": "导致"})
        refused = tools["link_memories"].invoke({"source_memory_description": tired, "target_memory_description": gym, "relation": "rhymes with"})
        assert "Could not link" in refused and "same_topic" in refused
        [link] = m.services.sql.memory_links([tired])
        assert link["relation"] == "causes"
        assert m.explain(gym)["links"][0]["relation"] == "causes"


def test_the_migration_types_old_links(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        a = m.add("Ann likes tea", user_id="ann", infer=False)["results"][0]["id"]
        b = m.add("Ann likes green tea", user_id="ann", infer=False)["results"][0]["id"]
        m.services.sql.link_memories(Scope(user_id="ann"), a, b, "same_topic")
        db = tmp_path / "d" / "memoryx.db"
    con = sqlite3.connect(db)
    with con:  # as an older MemoryX left it: free-text relations, schema version 6
        con.execute("UPDATE memory_links SET relation = 'sequence'")
        con.execute("INSERT INTO memory_links (id, source_id, target_id, relation, importance, created_at, user_id) "
                    "SELECT 'x2', source_id, target_id, 'whatever we said', 0.5, created_at, user_id FROM memory_links")
        con.execute("DELETE FROM schema_version WHERE version >= 7")
    con.close()
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        links = m.services.sql.memory_links([a])
        assert sorted(lk["relation"] for lk in links) == ["follows", "same_topic"]
