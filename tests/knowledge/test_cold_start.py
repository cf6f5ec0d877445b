"""Cold start: a user with no memories gets their group's and the agent's own memories (never another
user's) and profile questions in the query's language; once they have memories of their own, no cold start."""

from __future__ import annotations

from memoryx import Memory
from memoryx.knowledge.cold_start import PROFILE_QUESTIONS


def test_a_new_user_gets_the_group_and_agent_memories_and_questions(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        rule = m.add("Always answer in a friendly tone", agent_id="bot", infer=False)["results"][0]["id"]
        plan = m.add("The club meets every Thursday at 7pm", group_id="club", infer=False)["results"][0]["id"]
        bobs = m.add("Bob is allergic to peanuts", user_id="bob", group_id="club", infer=False)["results"][0]["id"]
        ctx = m.get_context("hello there", user_id="newbie", agent_id="bot", group_id="club")
        shown = {x["id"]: x["from"] for x in ctx["cold_start"]["memories"]}
        assert shown == {rule: "agent", plan: "group"} and bobs not in ctx["memories"]
        assert "Thursday" in ctx["context"] and "friendly tone" in ctx["context"] and "peanuts" not in ctx["context"]
        assert ctx["cold_start"]["questions"] == PROFILE_QUESTIONS["en"]
        assert PROFILE_QUESTIONS["en"][0] in ctx["context"]
        zh = m.get_context("你好", user_id="newbie", agent_id="bot")
        assert zh["cold_start"]["questions"] == PROFILE_QUESTIONS["zh"]
        assert m.get_context("こんにちは", user_id="newbie")["cold_start"]["questions"] == PROFILE_QUESTIONS["ja"]
        m.add("I play the trumpet", user_id="newbie", infer=False)
        assert "cold_start" not in m.get_context("hello", user_id="newbie", agent_id="bot")
        # whether newbie has private memories is not the group's to learn: in the club, newbie is still new
        assert "cold_start" in m.get_context("hello", user_id="newbie", agent_id="bot", group_id="club")
