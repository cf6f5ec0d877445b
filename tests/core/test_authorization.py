"""authorize(): the one decision every door asks, as a table of principal x action x requested ids."""

from __future__ import annotations

import pytest

from memoryx.core.authorization import DEV_PRINCIPAL, Action, Principal, authorize, stdio_principal
from memoryx.core.scope import Scope
from memoryx.errors import AccessDeniedError, InvalidInputError, ScopeError

F = frozenset
ALICE = Principal("alice", users=F({"alice"}))
TEAM = Principal("team", users=F({"alice", "carol"}))
AGENT = Principal("agent", agents=F({"agentX"}))
ALICE_AGENT = Principal("alice-agent", users=F({"alice"}), agents=F({"agentX"}))
GROUP = Principal("group", groups=F({"g1"}))
ADMIN = Principal("admin", admin=True)


@pytest.mark.parametrize("principal, action, requested, scope", [
    (ALICE, Action.SEARCH, {}, Scope(user_id="alice")),
    (ALICE, Action.LIST, {"agent_id": "any", "run_id": "r1"}, Scope(user_id="alice", agent_id="any", run_id="r1")),
    (TEAM, Action.WRITE, {"user_id": "carol"}, Scope(user_id="carol")),
    (ALICE_AGENT, Action.LIST, {}, Scope(user_id="alice", agent_id="agentX")),
    (AGENT, Action.LIST, {"run_id": "r1"}, Scope(agent_id="agentX", run_id="r1", no_user=True)),
    (AGENT, Action.DELETE, {}, Scope(agent_id="agentX", no_user=True)),
    (GROUP, Action.SEARCH, {}, Scope(group_id="g1")),
    (GROUP, Action.WRITE, {"user_id": "alice"}, Scope(user_id="alice", group_id="g1")),
    (GROUP, Action.PROFILE, {"group_id": "g1"}, Scope(group_id="g1")),
    (ADMIN, Action.SEARCH, {"run_id": "r1"}, Scope(run_id="r1")),
    (ADMIN, Action.JUDGMENTS, {}, None),
    (ADMIN, Action.METRICS, {}, None),
    (DEV_PRINCIPAL, Action.ADMIN, {}, None),
    (stdio_principal(["alice"]), Action.WRITE, {}, Scope(user_id="alice")),
])
def test_granted(principal, action, requested, scope):
    assert authorize(principal, action, requested) == scope


@pytest.mark.parametrize("principal, action, requested, error", [
    (ALICE, Action.SEARCH, {"user_id": "bob"}, AccessDeniedError),
    (ALICE, Action.SEARCH, {"group_id": "g1"}, AccessDeniedError),
    (TEAM, Action.SEARCH, {}, ScopeError),
    (ALICE_AGENT, Action.WRITE, {"agent_id": "agentY"}, AccessDeniedError),
    (AGENT, Action.LIST, {"user_id": "alice"}, AccessDeniedError),
    (AGENT, Action.WRITE, {"agent_id": "agentY"}, AccessDeniedError),
    (AGENT, Action.PURGE, {}, AccessDeniedError),
    (GROUP, Action.WRITE, {"group_id": "g2"}, AccessDeniedError),
    (GROUP, Action.PROFILE, {"user_id": "alice"}, AccessDeniedError),
    (ALICE, Action.PROFILE, {"user_id": "bob", "group_id": "g1"}, AccessDeniedError),
    (ALICE, Action.METRICS, {}, AccessDeniedError),
    (GROUP, Action.ADMIN, {}, AccessDeniedError),
    (ALICE, Action.SEARCH, {"user_id": ["alice"]}, InvalidInputError),
    (ADMIN, Action.SEARCH, {"user_id": 7}, InvalidInputError),
    (ADMIN, Action.SEARCH, {}, ScopeError),
])
def test_refused(principal, action, requested, error):
    with pytest.raises(error):
        authorize(principal, action, requested)


def test_record_checks_and_the_no_user_scope():
    assert AGENT.can_record({"agent_id": "agentX"}) and not AGENT.can_record({"user_id": "alice", "agent_id": "agentX"})
    assert GROUP.can_record({"user_id": "alice", "group_id": "g1"}) and not GROUP.can_record({"user_id": "alice"})
    assert ALICE_AGENT.can_record({"user_id": "alice"}) and not ALICE_AGENT.can_record({"user_id": "alice", "agent_id": "y"})
    scope = Scope(agent_id="agentX", no_user=True)
    assert scope.match() == {"agent_id": "agentX", "group_id": None, "user_id": None}
    assert scope.contains({"agent_id": "agentX"}) and not scope.contains({"agent_id": "agentX", "user_id": "bob"})
    with pytest.raises(ScopeError):
        Scope(user_id="a", no_user=True)
