"""Cold start: what a chatbot can use for a user it knows nothing about yet.

A user with no memories of their own still belongs somewhere: the group chat they speak in has memories of
its own (its rules, its plans, what the group decided), and the agent has memories of its own (agent-global:
how it should behave, what it knows of its domain). `cold_start` gathers those, most important first, and
adds a few profile questions the chatbot may ask to get to know the user, in the language of the query.
Nothing of another user is ever shown: only the group's own and the agent's own memories (core.owners).
"""

from __future__ import annotations

import re
from typing import Any

from memoryx.core.owners import owned_by
from memoryx.core.scope import Scope

BORROWED_MAX = 50  # memories read per source before ranking
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")

PROFILE_QUESTIONS = {
    "en": ["What should I call you?", "Where are you based, and what do you do?",
           "What would you like help with most often?", "Anything you'd like me to always keep in mind "
           "(preferences, things to avoid)?"],
    "zh": ["我该怎么称呼你？", "你在哪个城市，做什么工作？", "你最常需要我帮忙做什么？", "有什么偏好或需要避免的事情希望我一直记住吗？"],
    "ja": ["何とお呼びすればいいですか？", "どちらにお住まいで、どんなお仕事をされていますか？",
           "どんなことで一番お手伝いが必要ですか？", "いつも覚えておいてほしい好みや避けたいことはありますか？"],
}


def language_of(text: str) -> str:
    """"ja" when the text has kana, "zh" when it has Han characters only, else "en"."""
    if _KANA.search(text or ""):
        return "ja"
    return "zh" if _HAN.search(text or "") else "en"


def _own(sql: Any, owner: Scope) -> list[dict]:
    rows = sql.list_memories(owner, limit=BORROWED_MAX)
    return [r for r in rows if owned_by(owner, r) and r.get("status") not in ("merged", "archived")]


def cold_start(sql: Any, *, user_id: str | None, agent_id: str | None = None, group_id: str | None = None,
               query: str = "", limit: int = 5) -> dict | None:
    """None when the user has memories (or none is named); else {"memories": the group's and the agent's own
    memories, most important first, at most `limit`, "questions": profile questions, "language"}."""
    # "new" within the asked scope: in a group, whether the user has private memories is not the group's to learn
    if not user_id or sql.list_memories(Scope(user_id=user_id, group_id=group_id), limit=1):
        return None
    borrowed: list[dict] = []
    if group_id:
        borrowed += [{**r, "borrowed_from": "group"} for r in _own(sql, Scope(group_id=group_id))]
    if agent_id:
        borrowed += [{**r, "borrowed_from": "agent"} for r in _own(sql, Scope(agent_id=agent_id))]
    borrowed.sort(key=lambda r: (-(float(r.get("importance") or 0.0)), r.get("created_at") or ""))
    language = language_of(query)
    return {"memories": borrowed[:max(0, limit)], "questions": list(PROFILE_QUESTIONS[language]),
            "language": language}
