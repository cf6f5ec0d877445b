"""What MemoryCore reads for a chat prompt: the context block (profile, recent episodes, memory layers and
the most relevant memories within a token budget) and profiles. A mixin of MemoryCore (memory_core.py): it
uses the core's `settings` and `services`."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from memoryx.api.inputs import optional_scope
from memoryx.core.authorization import profile_scope
from memoryx.core.scope import Scope
from memoryx.errors import ScopeError
from memoryx.knowledge.cold_start import cold_start
from memoryx.knowledge.profiles import (
    GROUP_PROFILE_MEMORIES,
    build_profile,
    group_insights,
    group_subject,
    profile_lines,
    user_subject,
)
from memoryx.lifecycle.layers import WORKING, layer_of
from memoryx.search.context_block import build_context

RECENT_EPISODES = 3  # episodes get_context shows
COLD_START_LINE = "New user, nothing remembered yet. Questions you may ask:"


class ContextReads:
    def get_context(self, query, user_id, agent_id, run_id, max_tokens, limit, search_result: dict,
                    group_id=None, visible: Callable[[list[dict]], list[dict]] | None = None,
                    no_user: bool = False) -> dict:
        """Profile + recent episodes + the most relevant memories, within `max_tokens`. A user with no
        memories yet gets the group's and the agent's own memories and profile questions (cold start).

        The profile shown is the one the scope reaches (core.authorization.profile_scope: none in a group, the
        agent's values only with an agent); `visible` (a principal's record filter) keeps the borrowed
        memories of a cold start to those its caller may read; `no_user` (an agent key's scope) reads the
        rows without a user only, where an unset user_id would mean every user's."""
        lines, episodes = [], []
        whose = profile_scope(optional_scope(user_id, agent_id, None, group_id))
        if whose is not None and self.settings.profiles:
            lines = profile_lines(self.get_profile(whose.user_id, agent_id=whose.agent_id))
        # every part of the block reads the request's own scope, the group included: a user's private
        # layers, episodes and turns are not a group's to show
        scope = optional_scope(user_id, agent_id, run_id, group_id)
        if scope is not None and no_user and scope.user_id is None:
            scope = replace(scope, no_user=True)
        if scope is not None and (self.settings.episodes or self.settings.participant_episodes):
            # a participant's own episodes of the group's conversations live in the group
            episodes = self.services.sql.list_memories(scope, limit=RECENT_EPISODES, categories=["episode"])
        working, core_items = self._layer_context(scope)
        fresh = cold_start(self.services.sql, user_id=user_id, agent_id=agent_id, group_id=group_id, query=query,
                           limit=self.settings.context_layer_items) if self.settings.cold_start else None
        if fresh is not None and visible is not None:
            fresh["memories"] = visible(fresh["memories"])
        if fresh is not None:
            lines = lines + [f"{COLD_START_LINE} {' / '.join(fresh['questions'])}"]
            core_items = core_items + [m for m in fresh["memories"] if m["id"] not in {c["id"] for c in core_items}]
        out = build_context(search_result, max_tokens=max_tokens, profile=lines, episodes=episodes,
                            long_term=core_items, working=working)
        if run_id and self.settings.working_memory_turns > 0:  # the open run's last turns (working memory)
            out["working_turns"] = self.services.sql.run_turns(scope, self.settings.working_memory_turns)
        if fresh is not None:
            out["cold_start"] = {"memories": [{"id": m["id"], "memory": m["memory"], "from": m["borrowed_from"]}
                                              for m in fresh["memories"]],
                                 "questions": fresh["questions"]}
        return out

    def working_memory(self, run_id, user_id=None, agent_id=None, group_id=None) -> dict:
        """The working memory of an open run: its last settings.working_memory_turns turns (the messages its
        adds sent, oldest first) and the memories the run wrote that are still working (newest first). Both
        are cleared by end_run: the turns are no longer shown and the memories become short-term or archived."""
        if not isinstance(run_id, str) or not run_id.strip():
            raise ScopeError(f"run_id must be a non-empty string, got {run_id!r}")
        scope = optional_scope(user_id, agent_id, run_id.strip(), group_id)
        n = self.settings.working_memory_turns
        turns = self.services.sql.run_turns(scope, n) if n > 0 else []
        rows = self.services.sql.list_memories(scope, limit=100)
        working = sorted((r for r in rows if layer_of(r) == WORKING and r["status"] not in ("merged", "archived")),
                         key=lambda r: r.get("created_at") or "", reverse=True)
        return {"run_id": scope.run_id, "turns": turns, "memories": working}

    def _layer_context(self, scope: Scope | None) -> tuple[list[dict], list[dict]]:
        """Memory layers: the run's working memories (newest first) and the scope's
        long-term ones (most important first); short-term memories come through the search results."""
        n = self.settings.context_layer_items
        if scope is None or n <= 0:
            return [], []
        sql = self.services.sql
        owner = Scope(user_id=scope.user_id, agent_id=scope.agent_id, group_id=scope.group_id,
                      no_user=scope.no_user) \
            if scope.user_id or scope.agent_id or scope.group_id else scope  # long-term outlives the run
        core_items = sql.layer_memories(owner, "long_term", limit=n)
        working = []
        if scope.run_id:
            rows = sql.list_memories(scope, limit=100)
            working = sorted((r for r in rows if layer_of(r) == WORKING and r["status"] not in ("merged", "archived")),
                             key=lambda r: r.get("created_at") or "", reverse=True)[:n]
        return working, core_items

    def get_profile(self, user_id=None, group_id=None, include_history: bool = False, agent_id=None) -> dict:
        """The user's profile (or, with group_id alone, the group's), built by memoryx.knowledge.profiles.
        With agent_id, only the values a memory of that agent backs (what a key bound to the agent reads);
        a value with no memory left to say whose it was (one that ended when its memories were deleted) is
        then left out too."""
        if not user_id and not group_id:
            raise ScopeError("get_profile needs user_id (a user's profile) or group_id (a group's profile).")
        for name, value in (("user_id", user_id), ("group_id", group_id), ("agent_id", agent_id)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ScopeError(f"{name} must be a non-empty string, got {value!r}")
        subject = user_subject(user_id) if user_id else group_subject(group_id)
        sql = self.services.sql
        rows = sql.profile_values(subject, include_ended=True)
        ids = sorted({i for r in rows for i in r["memory_ids"]})
        live = {m["id"] for m in sql.get_memories(ids)}  # a value whose memories were all deleted is history
        if agent_id and user_id:
            inside = Scope(user_id=user_id, agent_id=agent_id)
            said = {m["id"] for m in sql.get_memories_any(ids) if inside.contains(m)}
            rows = [r for r in rows if said & set(r["memory_ids"])]
            live &= said
        profile = build_profile(subject, rows, live, include_history=include_history)
        if group_id and not user_id:  # roles and recurring topics: read from the group's memories
            rows = sql.list_memories(Scope(group_id=group_id), limit=GROUP_PROFILE_MEMORIES)
            # episodes retell the turns and facts already counted: read the statements only
            profile.update(group_insights([r for r in rows if r.get("category") != "episode"]))
        return profile
