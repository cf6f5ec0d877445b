"""`make_graph_store`: the graph store the settings ask for (and the embedded server behind it)."""

from __future__ import annotations

from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph.falkordb_server import EmbeddedFalkorDB
from memoryx.stores.graph.native import NativeTransport
from memoryx.stores.graph.store import GraphStore


def make_graph_store(settings) -> tuple[GraphStore | None, EmbeddedFalkorDB | None]:
    """'falkordb': the FalkorDB server at settings.falkordb_url, or else start (or reuse) the embedded server
    under settings.data_dir and connect to it over its private socket, with automatic restart if it dies;
    'neo4j': connect to settings.neo4j_url over Bolt; 'none': (None, None)."""
    backend = settings.graph_backend
    if backend == "none":
        return None, None
    if backend == "neo4j":
        if not settings.neo4j_url:
            raise StoreUnavailableError("MEMORYX_GRAPH_BACKEND=neo4j needs MEMORYX_NEO4J_URL (bolt://host:7687), "
                                        "or set MEMORYX_GRAPH_BACKEND=falkordb|none.")
        return _ready(GraphStore(settings.neo4j_url, settings.neo4j_username, settings.neo4j_password,
                                 flavor="auto")), None
    if backend != "falkordb":
        raise StoreUnavailableError(f"Unknown MEMORYX_GRAPH_BACKEND {backend!r}: use falkordb, neo4j or none.")
    if settings.falkordb_url:
        return _ready(GraphStore(NativeTransport(settings.falkordb_url))), None
    server = EmbeddedFalkorDB(settings.data_dir)
    url = server.start()
    try:
        store = _ready(GraphStore(NativeTransport(url, server.password, reconnect=server.start)))
    except Exception:
        server.stop()
        raise
    return store, server


def _ready(store: GraphStore) -> GraphStore:
    try:
        store.ensure_indexes()
    except Exception:
        store.close()
        raise
    return store
