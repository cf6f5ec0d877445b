"""The transport interface: how `GraphStore` sends one Cypher statement to a graph server.

A transport owns the connection (and its reconnects) and the wire's quirks; the store owns the Cypher.
Implementations: `NativeTransport` (FalkorDB's own protocol, native.py) and `BoltTransport` (langchain-neo4j /
the neo4j driver, for Neo4j and, in tests, FalkorDB's Bolt port).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable

from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph.dialect import CypherDialect


def retry_after_connection_error(attempt: int, reconnect: Callable[[], None] | None) -> tuple[bool, Exception | None]:
    """What a transport does after its connection dropped on try `attempt` (0-based): (try again?, the
    reconnect's own failure). The first retry takes a fresh pooled connection (the pool has dropped the dead
    one); the second reconnects first, when reconnecting is allowed; then it gives up. A reconnect that finds
    the server gone raises StoreUnavailableError as it is."""
    if attempt == 0:
        return True, None
    if attempt == 1 and reconnect is not None:
        try:
            reconnect()
        except StoreUnavailableError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported as the statement's failure by the caller
            return False, exc
        return True, None
    return False, None


class GraphTransport(ABC):
    """One connection to a graph server. Thread-safe."""

    #: where the server is (for messages and for reconnects)
    url: str
    #: how this server takes parameters and creates indexes
    dialect: CypherDialect

    @abstractmethod
    def run(self, op: str, query: str, params: dict[str, Any] | None = None) -> list[dict]:
        """Run one auto-commit statement; its records as dicts. Every failure (server error, unreachable,
        closed) raises StoreUnavailableError naming `op`."""

    def run_rows(self, op: str, query: str, row: str, params: dict[str, Any]) -> list[list]:
        """The value lists of `query` followed by ``RETURN <row>`` (`row` a Cypher list expression).

        A transport that decodes many small records slowly may fetch them packed (see BoltTransport)."""
        return [record["row"] for record in self.run(op, f"{query} RETURN {row} AS row", params)]

    @abstractmethod
    def close(self) -> None:
        """Release the connection; later statements raise StoreUnavailableError. Idempotent."""
