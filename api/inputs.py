"""Checks of what a caller hands the Python API (ids, limits, scopes, settings), shared by Memory and
AsyncMemory; each failure is an InvalidInputError or ScopeError that says what to pass instead."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from memoryx.api.mem0_config import settings_from_config
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, ScopeError
from memoryx.settings import Settings, get_settings, setting_error


def resolve_settings(settings: Settings | dict | None, overrides: dict) -> Settings:
    if isinstance(settings, dict):
        settings = settings_from_config(settings)
    if settings is None:
        try:
            settings = Settings(**overrides) if overrides else get_settings()
        except ValidationError as exc:  # a bad keyword argument (or MEMORYX_* variable), named
            raise setting_error(exc, overrides) from None
    elif overrides:
        settings = settings.model_copy(update=overrides)
    return settings


def scope_of_ids(user_id=None, agent_id=None, run_id=None, group_id=None) -> Scope:
    return Scope(user_id=user_id, agent_id=agent_id, run_id=run_id, group_id=group_id)


def optional_scope(user_id=None, agent_id=None, run_id=None, group_id=None) -> Scope | None:
    if user_id is None and agent_id is None and run_id is None and group_id is None:
        return None
    return scope_of_ids(user_id, agent_id, run_id, group_id)


def check_id(memory_id: Any, what: str = "memory_id") -> str:
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInputError(f"{what} must be a non-empty string, got {memory_id!r}")
    return memory_id.strip()


def check_limit(limit: Any, what: str = "limit") -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"{what} must be a positive integer, got {limit!r}")
    return limit


def scope_arg(scope: Scope | dict | None, user_id=None, agent_id=None, run_id=None) -> Scope | None:
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, dict):
        return scope_of_ids(**{k: scope.get(k) for k in ("user_id", "agent_id", "run_id", "group_id")})
    if scope is not None:
        raise ScopeError(f"scope must be a Scope or a dict of user_id/agent_id/run_id/group_id, got {type(scope).__name__}")
    return optional_scope(user_id, agent_id, run_id)
