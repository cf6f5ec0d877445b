"""The transport interface: how `GraphStore` sends one Cypher statement to a graph server.

A transport owns the connection (and its reconnects) and the wire's quirks; the store owns the Cypher.
Implementations: `NativeTransport` (FalkorDB's own protocol, native.py) and `BoltTransport` (langchain-neo4j /
the neo4j driver, for Neo4j and, in tests, FalkorDB's Bolt port).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from memoryx.stores.graph.dialect import CypherDialect


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
