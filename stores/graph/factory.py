"""`make_graph_store`: the graph store the settings ask for (and the embedded server behind it)."""

from __future__ import annotations

from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph.falkordb_server import EmbeddedFalkorDB
from memoryx.stores.graph.store import GraphStore


def make_graph_store(settings) -> tuple[GraphStore | None, EmbeddedFalkorDB | None]:
    """'falkordb': start (or reuse) the embedded server under settings.data_dir and connect to it, with
    automatic restart if it dies; 'neo4j': connect to settings.neo4j_url; 'none': (None, None)."""
    backend = settings.graph_backend
    if backend == "none":
        return None, None
    if backend == "neo4j":
        if not settings.neo4j_url:
            raise StoreUnavailableError("MEMORYX_GRAPH_BACKEND=neo4j needs MEMORYX_NEO4J_URL (bolt://host:7687), "
                                        "or set MEMORYX_GRAPH_BACKEND=falkordb|none.")
        store = GraphStore(settings.neo4j_url, settings.neo4j_username, settings.neo4j_password, flavor="auto")
        try:
            store.ensure_indexes()
        except Exception:
            store.close()
            raise
        return store, None
    if backend != "falkordb":
        raise StoreUnavailableError(f"Unknown MEMORYX_GRAPH_BACKEND {backend!r}: use falkordb, neo4j or none.")
    server = EmbeddedFalkorDB(settings.data_dir, port=settings.falkordb_port, bolt_port=settings.falkordb_bolt_port)
    url = server.start()
    try:
        store = GraphStore(url, "", "", flavor="falkordb", reconnect=server.start)
        store.ensure_indexes()
    except Exception:
        server.stop()
        raise
    return store, server
