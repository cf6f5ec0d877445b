"""How a LangGraph store namespace names a MemoryX scope (memoryx.api.langgraph_store).

A rule is a list of patterns, tried in order; the first one that matches the start of a namespace gives
its scope. A pattern is a tuple whose elements are

    "literal"      the namespace element must equal it
    "*"            any one element
    "{user_id}"    any one element, which becomes the scope's user_id (also {agent_id}, {run_id}, {group_id})

A namespace may be longer than the pattern: the elements after it are folders inside the scope. The default
`(("*", "{user_id}"),)` reads `("memories", "alice")` (LangMem's and LangGraph's memory-agent convention) and
`("memories", "alice", "profile")` as alice's memories. `[("agents", "{agent_id}"), ("*", "{user_id}")]`
adds an agent's own namespace. A namespace that no pattern matches has no tenant and is refused: a store
shared by many users must never guess whose memory a write is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from langgraph.store.base import InvalidNamespaceError

from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.errors import ScopeError

DEFAULT_PATTERNS: tuple[tuple[str, ...], ...] = (("*", "{user_id}"),)
_FIELD = re.compile(r"^\{(" + "|".join(SCOPE_FIELDS) + r")\}$")


class NamespaceScopeError(ScopeError, InvalidNamespaceError):
    """A namespace that names no MemoryX scope (or a pattern that cannot be one)."""


class NamespaceRule:
    """Namespace -> scope fields; see the module docstring. `fixed` scope fields are added to every scope
    (e.g. agent_id="support-bot" keeps a bot's store apart from the same users' other memories)."""

    def __init__(self, patterns: Iterable[Sequence[str]] | None = None, **fixed: str | None):
        self.patterns = tuple(tuple(p) for p in (patterns if patterns is not None else DEFAULT_PATTERNS))
        self.fixed = {k: v for k, v in fixed.items() if v is not None}
        unknown = set(self.fixed) - set(SCOPE_FIELDS)
        if unknown:
            raise NamespaceScopeError(f"Unknown scope fields {sorted(unknown)}; use {', '.join(SCOPE_FIELDS)}.")
        if not self.patterns:
            raise NamespaceScopeError("A namespace rule needs at least one pattern, e.g. ('*', '{user_id}').")
        for pattern in self.patterns:
            fields = [_FIELD.match(e).group(1) for e in pattern if isinstance(e, str) and _FIELD.match(e)]
            if not pattern or not all(isinstance(e, str) and e for e in pattern):
                raise NamespaceScopeError(f"Pattern {pattern!r}: elements are non-empty strings.")
            if len(set(fields)) != len(fields) or set(fields) & set(self.fixed):
                raise NamespaceScopeError(f"Pattern {pattern!r} names a scope field twice.")
            if not fields and not self.fixed:
                raise NamespaceScopeError(f"Pattern {pattern!r} names no scope field; add e.g. '{{user_id}}'.")

    def fields_of(self, namespace: Sequence[str]) -> dict[str, str] | None:
        """The scope fields `namespace` names, or None when no pattern matches its start."""
        for pattern in self.patterns:
            if len(namespace) < len(pattern):
                continue
            fields: dict[str, str] = {}
            for want, got in zip(pattern, namespace):
                m = _FIELD.match(want)
                if m:
                    fields[m.group(1)] = got
                elif want != "*" and want != got:
                    break
            else:
                return {**fields, **self.fixed}
        return None

    def scope_of(self, namespace: Sequence[str]) -> Scope:
        fields = self.fields_of(namespace)
        if fields is None:
            raise NamespaceScopeError(
                f"Namespace {tuple(namespace)!r} names no MemoryX scope: the store's namespace rule is "
                f"{list(self.patterns)!r}. Put a tenant in it, e.g. ('memories', user_id), or pass "
                "MemoryXStore(namespaces=[...]) a pattern that matches it.")
        try:
            return Scope(**fields)
        except ScopeError as exc:
            raise NamespaceScopeError(f"Namespace {tuple(namespace)!r}: {exc}") from None

    def describe(self) -> dict:
        return {"patterns": [list(p) for p in self.patterns], "fixed": dict(self.fixed)}


def prefix_key(namespace: Sequence[str]) -> str:
    """One namespace prefix as a string that no other prefix gives (JSON of its elements): what a memory's
    metadata lists, so that a search by prefix is one metadata condition."""
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


def prefix_keys(namespace: Sequence[str]) -> list[str]:
    return [prefix_key(namespace[:i]) for i in range(1, len(namespace) + 1)]
