"""How a Cypher server takes parameters and creates indexes: one dialect object per server kind.

The store writes one portable Cypher text with ``$name`` parameters; the dialect decides how those
parameters travel and how an index is created idempotently.

* `Neo4jDialect`: parameters travel natively; ``CREATE INDEX <name> IF NOT EXISTS``.
* `FalkorDBNativeDialect`: FalkorDB over its own protocol (native.py): the `falkordb` client sends the
  parameters; values it would render unsafely (NaN, NUL, objects it would ``str()``) are refused first.
* `FalkorDBDialect`: FalkorDB's Bolt endpoint pastes Bolt parameters into a fixed 4 KB buffer *as unescaped
  text* (a ``'`` breaks the query or injects Cypher; over ~4 KB crashes the server), so no Bolt parameters
  are sent: they are encoded into FalkorDB's own parameter header (``CYPHER name=<literal> ... <query>``,
  the mechanism FalkorDB's RESP clients use), strings escaped exactly like the official `falkordb` client
  does. Values stay parameters (parsed by the parameter parser, referenced as ``$name``); there is no size
  limit. FalkorDB errors carry no message, so an index is created only when ``CALL db.indexes()`` does not
  already list it.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal, Protocol

from memoryx.errors import InvalidInputError

DialectName = Literal["falkordb", "neo4j"]
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def cypher_literal(value: Any) -> str:
    """A value as a Cypher literal for FalkorDB's ``CYPHER name=<literal>`` parameter header.

    Strings: backslash and double quote escaped, in double quotes (as the official falkordb client does).
    NUL characters cannot be represented and are rejected.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise InvalidInputError(f"graph properties cannot be NaN or infinite: {value!r}")
        return repr(value)
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInputError("graph properties cannot contain NUL characters")
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(cypher_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if not isinstance(key, str) or not _IDENT.match(key):
                raise InvalidInputError(f"graph parameter map key must be an identifier, got {key!r}")
            parts.append(f"{key}:{cypher_literal(item)}")
        return "{" + ",".join(parts) + "}"
    raise InvalidInputError(f"unsupported graph parameter type {type(value).__name__}: {value!r}")


def inline_params(query: str, params: dict[str, Any]) -> str:
    """FalkorDB parameter header + query (see the module docstring)."""
    if not params:
        return query
    head = []
    for name, value in params.items():
        if not _IDENT.match(name):
            raise InvalidInputError(f"graph parameter name must be an identifier, got {name!r}")
        head.append(f"{name}={cypher_literal(value)}")
    return "CYPHER " + " ".join(head) + " " + query


class CypherDialect(Protocol):
    name: DialectName
    #: True when creating an index that exists is a no-op (else the store lists the indexes first)
    creates_indexes_idempotently: bool

    def encode(self, query: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(statement text, parameters to send with it)."""

    def create_index(self, kind: str, label: str, prop: str, name: str) -> str:
        """The statement creating index `name` on `label`.`prop` (`kind` 'node' or 'rel')."""


def index_pattern(kind: str, label: str) -> str:
    return f"(n:{label})" if kind == "node" else f"()-[n:{label}]-()"


class Neo4jDialect:
    name: DialectName = "neo4j"
    creates_indexes_idempotently = True  # CREATE INDEX ... IF NOT EXISTS

    def encode(self, query: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return query, params

    def create_index(self, kind: str, label: str, prop: str, name: str) -> str:
        return f"CREATE INDEX {name} IF NOT EXISTS FOR {index_pattern(kind, label)} ON (n.{prop})"


class FalkorDBDialect:
    name: DialectName = "falkordb"
    creates_indexes_idempotently = False  # its errors carry no message: list the indexes first

    def encode(self, query: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return inline_params(query, params), {}

    def create_index(self, kind: str, label: str, prop: str, name: str) -> str:
        return f"CREATE INDEX FOR {index_pattern(kind, label)} ON (n.{prop})"


def check_param(value: Any) -> None:
    """Refuse what the `falkordb` client would render as something other than the value itself: NaN and
    infinities, NUL characters (the server's parser stops there), map keys with a backtick, and any type
    it would pass through ``str()``."""
    if value is None or isinstance(value, (bool, int)):
        return
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise InvalidInputError(f"graph properties cannot be NaN or infinite: {value!r}")
    elif isinstance(value, str):
        if "\x00" in value:
            raise InvalidInputError("graph properties cannot contain NUL characters")
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_param(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or not key or "`" in key:
                raise InvalidInputError(f"graph parameter map key must be a string without backticks, got {key!r}")
            check_param(item)
    else:
        raise InvalidInputError(f"unsupported graph parameter type {type(value).__name__}: {value!r}")


class FalkorDBNativeDialect(FalkorDBDialect):
    """FalkorDB's own protocol: the client sends the parameters (see the module docstring)."""

    def check(self, params: dict[str, Any]) -> dict[str, Any]:
        for name, value in params.items():
            if not _IDENT.match(name):
                raise InvalidInputError(f"graph parameter name must be an identifier, got {name!r}")
            check_param(value)
        return params

    def encode(self, query: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return query, self.check(params)


DIALECTS: dict[str, CypherDialect] = {"neo4j": Neo4jDialect(), "falkordb": FalkorDBDialect()}
