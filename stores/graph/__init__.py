"""The graph projection: `GraphStore` (store.py) over a `GraphTransport` (transport.py): FalkorDB's native
protocol in native.py (the embedded default), Bolt in bolt.py (Neo4j); parameter encoding per server in
dialect.py; the embedded FalkorDB (private socket, tied to its owner's life) in falkordb_server.py."""

from memoryx.stores.graph.bolt import BoltTransport
from memoryx.stores.graph.dialect import (
    CypherDialect,
    FalkorDBDialect,
    FalkorDBNativeDialect,
    Neo4jDialect,
    cypher_literal,
    inline_params,
)
from memoryx.stores.graph.factory import make_graph_store
from memoryx.stores.graph.falkordb_server import EmbeddedFalkorDB
from memoryx.stores.graph.native import NativeTransport
from memoryx.stores.graph.store import GraphStore
from memoryx.stores.graph.transport import GraphTransport
from memoryx.stores.graph.values import now_ms, to_ms

__all__ = [
    "BoltTransport", "CypherDialect", "EmbeddedFalkorDB", "FalkorDBDialect", "FalkorDBNativeDialect",
    "GraphStore", "GraphTransport", "NativeTransport", "Neo4jDialect", "cypher_literal", "inline_params",
    "make_graph_store", "now_ms", "to_ms",
]
