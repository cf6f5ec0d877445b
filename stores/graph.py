"""Graph projection: entities and relations as a property graph, Cypher over Bolt via langchain-neo4j.

One model, portable between Neo4j and (embedded) FalkorDB:

* nodes ``(:Entity {id, name, normalized_name, entity_type, user_id, agent_id, run_id, created_at_ms,
  updated_at_ms})``; a scope field the entity's scope does not set is stored as ``''`` (never null);
* one relationship type ``[:RELATES {id, name, memory_id, valid, created_at_ms, invalidated_at_ms,
  invalidated_by, user_id, agent_id, run_id}]``. The relation text (any language, quotes, punctuation) is
  the *data* property ``name`` and is never part of a query's text;
* times are epoch milliseconds (FalkorDB's Bolt has no ``datetime()``); ids are our own uuids (no
  ``elementId()``);
* scope matching is the rule every MemoryX store uses: exact equality on each field the `Scope` sets
  (``Scope(user_id='a')`` sees a's entities of every agent/run; ``Scope(user_id='a', agent_id='x')`` only
  those with agent x). No prefix, case or partial matching.

Transport. `GraphStore` builds a `langchain_neo4j.Neo4jGraph(refresh_schema=False)` (kept as ``.graph``
for LangChain integrations) and runs its statements through that graph's neo4j driver
(``graph._driver``) in auto-commit sessions: ``Neo4jGraph.query`` uses managed transactions, which cost a
constant ~44 ms per call against FalkorDB (BEGIN/RUN/COMMIT round trips meeting delayed ACKs) against
~0.3-1 ms for one auto-commit RUN. Every statement here is a single idempotent statement (MERGE/SET/
DELETE by id), so auto-commit loses nothing, and a statement that fails on a dropped connection is
retried once on a fresh one.

FalkorDB 4.16 Bolt quirks handled here (see also falkordb_server.py):

* Bolt parameters are pasted by the server into a fixed 4 KB buffer *as unescaped text*: a ``'`` in a
  string parameter breaks the query (or injects Cypher) and parameters over ~4 KB crash the server.
  For FalkorDB the store therefore sends no Bolt parameters: it encodes them itself into FalkorDB's own
  parameter header (``CYPHER name=<literal> ...``, the mechanism FalkorDB's RESP clients use), with
  strings escaped exactly like the official `falkordb` client does. Values stay parameters (parsed by
  the parameter parser, referenced as ``$name``); there is no size limit. Round trips of quotes,
  backslashes, newlines, CJK and emoji are covered by the tests.
* Auto-commit RUN with a database name uses a graph literally called "db"; FalkorDB sessions are opened
  without a database (graph "falkordb").
* Server errors carry no message ("An unknown error occurred"), so indexes are created only when
  ``CALL db.indexes()`` does not already list them.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal
from urllib.parse import urlparse

from memoryx.errors import InvalidInputError, NotFoundError, ScopeError, StoreUnavailableError
from memoryx.scope import SCOPE_FIELDS, Scope
from memoryx.text import normalize_name

if TYPE_CHECKING:
    from memoryx.stores.falkordb_server import EmbeddedFalkorDB

log = logging.getLogger(__name__)

Flavor = Literal["auto", "falkordb", "neo4j"]
BATCH = 500           # rows per UNWIND statement
PAGE = 12             # neighbourhood rows per result record (12 x ~4.9 KB worst case < 64 KB)
MAX_NAME_CHARS = 512  # entity / relation names longer than this are stored clipped (full text stays in SQL)
MAX_TEXT_CHARS = 256  # ids, types, memory ids, trace ids
MAX_DEPTH = 2
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ADVICE = (
    "Check MEMORYX_GRAPH_BACKEND: 'falkordb' (embedded server under MEMORYX_DATA_DIR; ports "
    "MEMORYX_FALKORDB_PORT / MEMORYX_FALKORDB_BOLT_PORT), 'neo4j' (server at MEMORYX_NEO4J_URL with "
    "MEMORYX_NEO4J_USERNAME / MEMORYX_NEO4J_PASSWORD) or 'none' (no graph)."
)
_NEIGHBOUR_KEYS = ("id", "source_id", "source", "source_type", "relation", "target_id", "target", "target_type",
                   "memory_id", "valid", "created_at_ms", "invalidated_at_ms", "invalidated_by")
_INDEXES = (  # (kind, label/type, property, neo4j index name)
    ("node", "Entity", "id", "memoryx_entity_id"),
    ("node", "Entity", "user_id", "memoryx_entity_user_id"),
    ("node", "Entity", "agent_id", "memoryx_entity_agent_id"),
    ("node", "Entity", "run_id", "memoryx_entity_run_id"),
    ("rel", "RELATES", "id", "memoryx_relates_id"),
)


# --------------------------------------------------------------------------------------------- helpers


def now_ms() -> int:
    return int(time.time() * 1000)


def to_ms(value: Any) -> int | None:
    """Epoch ms from int/float ms, a datetime (naive = UTC) or an ISO-8601 string; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInputError(f"not an ISO-8601 time: {value!r}") from exc
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp() * 1000)
    raise InvalidInputError(f"not a time: {value!r}")


def _clip(value: Any, limit: int, what: str) -> Any:
    """Bound the size of stored strings: FalkorDB's Bolt cannot send a record over 64 KB."""
    if isinstance(value, str) and len(value) > limit:
        log.warning("graph %s longer than %d characters stored clipped (%d characters)", what, limit, len(value))
        return value[:limit]
    return value


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


def _scope_fields(scope: Scope) -> dict[str, str]:
    """All three scope fields, '' for the unset ones (how they are stored)."""
    if not isinstance(scope, Scope):
        raise ScopeError(f"a Scope is required, got {scope!r}")
    return {k: getattr(scope, k) or "" for k in SCOPE_FIELDS}


def _scope_match(scope: Scope | None, variables: Iterable[str], params: dict[str, Any]) -> list[str]:
    """WHERE conditions: each variable's scope fields equal the ones the scope sets."""
    if scope is None:
        return []
    if not isinstance(scope, Scope):
        raise ScopeError(f"a Scope is required, got {scope!r}")
    conds = []
    for key, value in scope.as_dict().items():
        params[f"scope_{key}"] = value
        conds.extend(f"{var}.{key} = $scope_{key}" for var in variables)
    return conds


def _ids(values: Iterable[Any], what: str) -> list[str]:
    out = []
    for v in values or []:
        if not isinstance(v, str) or not v:
            raise InvalidInputError(f"{what} must be non-empty strings, got {v!r}")
        out.append(v)
    return list(dict.fromkeys(out))


def _chunks(rows: list, size: int = BATCH) -> Iterable[list]:
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


def _where(conds: list[str]) -> str:
    return (" WHERE " + " AND ".join(conds)) if conds else ""


# ------------------------------------------------------------------------------------------------- store


class GraphStore:
    """The graph projection over Bolt (Neo4j or FalkorDB). Thread-safe; one per process is enough."""

    def __init__(self, url: str, username: str = "", password: str = "", *, flavor: Flavor = "auto",
                 reconnect: Callable[[], str] | None = None, connect_timeout: float = 5.0,
                 read_timeout: float = 60.0):
        """`flavor`: 'falkordb' / 'neo4j', or 'auto' to detect it. `reconnect` (used for the embedded
        server): called when the server is unreachable; it may restart the server and returns its Bolt URL,
        after which the failed statement is retried once."""
        self.url = url
        self._username = username or ""
        self._password = password or ""
        self._requested_flavor = flavor
        self._reconnect = reconnect
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._lock = threading.RLock()
        self._closed = False
        self.graph = None
        self._driver = None
        self.flavor: Literal["falkordb", "neo4j"] = "neo4j"
        self._connect(url)

    # --- connection ---------------------------------------------------------------------------------
    def _connect(self, url: str) -> None:
        from langchain_neo4j import Neo4jGraph

        from memoryx.stores.falkordb_server import bolt_sweep, patch_driver_for_falkordb

        parsed = urlparse(url)
        if self._requested_flavor != "neo4j" and parsed.scheme in ("bolt", "neo4j") and parsed.hostname:
            # a slot wedged by some client's GOODBYE would stall the first handshake (FalkorDB bug)
            try:
                bolt_sweep(parsed.hostname, parsed.port or 7687, timeout=0.5, attempts=4)
            except Exception:
                pass
        config = {"connection_timeout": self._connect_timeout,
                  "connection_acquisition_timeout": max(10.0, 2 * self._connect_timeout),
                  "max_transaction_retry_time": 2.0, "keep_alive": True}
        sweepable = self._requested_flavor != "neo4j" and parsed.scheme in ("bolt", "neo4j") and parsed.hostname
        for attempt in range(3):
            try:
                graph = Neo4jGraph(url=url, username=self._username, password=self._password,
                                   refresh_schema=False, driver_config=config)
                break
            except Exception as exc:  # ValueError (unreachable, bad credentials), ConfigurationError, ...
                # FalkorDB can drop a connection that races with another client's GOODBYE: if the port
                # still answers a handshake, try again
                if attempt < 2 and sweepable and bolt_sweep(parsed.hostname, parsed.port or 7687, timeout=0.5):
                    log.debug("graph connect attempt %d failed (%s); retrying", attempt + 1, exc)
                    continue
                raise StoreUnavailableError(
                    f"Cannot connect to the graph store at {url!r}: {exc}. {_ADVICE}") from exc
        driver = graph._driver
        flavor = self._requested_flavor
        if flavor == "auto":
            flavor = self._detect_flavor(driver)
        if flavor == "falkordb":
            patch_driver_for_falkordb(driver, read_timeout=self._read_timeout)
        self.graph, self._driver, self.url, self.flavor = graph, driver, url, flavor
        # FalkorDB: no database name (see module docstring); Neo4j: the graph's database (default 'neo4j')
        self._database = None if flavor == "falkordb" else getattr(graph, "_database", None)

    @staticmethod
    def _detect_flavor(driver: Any) -> Literal["falkordb", "neo4j"]:
        try:
            info = driver.get_server_info()
        except Exception:
            return "neo4j"
        connection_id = str(getattr(info, "_metadata", {}).get("connection_id", ""))
        # FalkorDB announces itself as "Neo4j/5.13.0" but hands out uuid connection ids; Neo4j uses "bolt-N"
        return "neo4j" if connection_id.startswith("bolt-") else "falkordb"

    def close(self) -> None:
        with self._lock:
            self._closed = True
            graph, self.graph, self._driver = self.graph, None, None
        if graph is not None:
            try:
                graph.close()
            except Exception:  # pragma: no cover
                pass

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, op: str, query: str, params: dict[str, Any] | None = None) -> list[dict]:
        """One auto-commit statement; connection failures retried (then `reconnect`), then
        StoreUnavailableError. Server-side errors raise StoreUnavailableError naming the operation."""
        import neo4j.exceptions as nx

        params = params or {}
        if self.flavor == "falkordb":
            text, args = inline_params(query, params), {}
        else:
            text, args = query, params
        last: Exception | None = None
        for attempt in range(3):
            driver = self._driver
            if self._closed or driver is None:
                raise StoreUnavailableError(f"The graph store at {self.url} is closed ({op}).")
            started = time.monotonic()
            try:
                with driver.session(database=self._database) as session:
                    result = session.run(text, args)
                    keys = result.keys()
                    return [dict(zip(keys, record)) for record in result]
            except nx.Neo4jError as exc:  # the server answered with an error
                raise StoreUnavailableError(f"Graph statement '{op}' failed on {self.url}: {exc}") from exc
            except (nx.DriverError, OSError) as exc:  # connection refused / dropped / timed out
                last = exc
                if time.monotonic() - started > min(10.0, self._read_timeout / 2):
                    break  # a read that timed out: retrying would only wait again
                if attempt == 0:
                    continue  # the pool has dropped the dead connection: try a fresh one
                if attempt == 1 and self._reconnect is not None:
                    try:
                        self._reconnect_now()
                    except StoreUnavailableError:
                        raise
                    except Exception as rexc:
                        last = rexc
                        break
                    continue
                break
        raise StoreUnavailableError(
            f"The graph store at {self.url} is unreachable ({op}: {type(last).__name__}: {last}). {_ADVICE}"
        ) from last

    def _reconnect_now(self) -> None:
        with self._lock:
            if self._closed:
                return
            url = self._reconnect() if self._reconnect else self.url
            log.warning("graph store unreachable; reconnecting to %s", url)
            old = self.graph
            self._connect(url)
            if old is not None:
                try:
                    old.close()
                except Exception:
                    pass

    # --- schema -------------------------------------------------------------------------------------
    def ensure_indexes(self) -> None:
        """Indexes on Entity(id, user_id, agent_id, run_id) and RELATES(id). Idempotent."""
        if self.flavor == "neo4j":
            for kind, label, prop, name in _INDEXES:
                pattern = f"(n:{label})" if kind == "node" else f"()-[n:{label}]-()"
                self._run("ensure_indexes", f"CREATE INDEX {name} IF NOT EXISTS FOR {pattern} ON (n.{prop})")
            return
        existing: set[tuple[str, str, str]] = set()
        for row in self._run("ensure_indexes",
                             "CALL db.indexes() YIELD label, properties, entitytype "
                             "RETURN label, properties, entitytype"):
            kind = "rel" if str(row.get("entitytype", "")).upper().startswith("REL") else "node"
            for prop in row.get("properties") or []:
                existing.add((kind, row.get("label"), prop))
        for kind, label, prop, _name in _INDEXES:
            if (kind, label, prop) in existing:
                continue
            pattern = f"(n:{label})" if kind == "node" else f"()-[n:{label}]-()"
            self._run("ensure_indexes", f"CREATE INDEX FOR {pattern} ON (n.{prop})")

    # --- writes -------------------------------------------------------------------------------------
    def upsert_entities(self, scope: Scope, entities: list[dict]) -> None:
        """MERGE entities by id: {id, name, entity_type?, normalized_name?, created_at_ms?}. An id that
        already exists in another scope is not touched (ScopeError)."""
        fields = _scope_fields(scope)
        stamp = now_ms()
        rows = []
        for e in entities or []:
            eid, name = e.get("id"), e.get("name")
            if not isinstance(eid, str) or not eid:
                raise InvalidInputError(f"entity id must be a non-empty string, got {eid!r}")
            if not isinstance(name, str) or not name.strip():
                raise InvalidInputError(f"entity {eid}: name must be a non-empty string")
            if len(eid) > MAX_TEXT_CHARS:
                raise InvalidInputError(f"entity id longer than {MAX_TEXT_CHARS} characters")
            rows.append({
                "id": eid, "name": _clip(name, MAX_NAME_CHARS, "entity name"),
                "normalized_name": _clip(e.get("normalized_name") or normalize_name(name), MAX_NAME_CHARS,
                                         "entity name"),
                "entity_type": _clip(e.get("entity_type") or e.get("type") or "entity", MAX_TEXT_CHARS,
                                     "entity type"),
                "created_at_ms": to_ms(e.get("created_at_ms", e.get("created_at"))) or stamp,
                "updated_at_ms": stamp, **fields,
            })
        if not rows:
            return
        query = (
            "UNWIND $rows AS row "
            "MERGE (n:Entity {id: row.id}) "
            "ON CREATE SET n.user_id = row.user_id, n.agent_id = row.agent_id, n.run_id = row.run_id, "
            "n.created_at_ms = row.created_at_ms "
            "WITH n, row WHERE n.user_id = row.user_id AND n.agent_id = row.agent_id AND n.run_id = row.run_id "
            "SET n.name = row.name, n.normalized_name = row.normalized_name, n.entity_type = row.entity_type, "
            "n.updated_at_ms = row.updated_at_ms "
            "RETURN collect(n.id) AS ids"
        )
        written: set[str] = set()
        for chunk in _chunks(rows):
            for rec in self._run("upsert_entities", query, {"rows": chunk}):
                written.update(rec["ids"] or [])
        foreign = [r["id"] for r in rows if r["id"] not in written]
        if foreign:
            raise ScopeError(f"entities {foreign[:5]} already exist in another scope; not updated from {scope.key()}")

    def upsert_relations(self, scope: Scope, relations: list[dict]) -> None:
        """MERGE relations by id between existing entities of the scope.

        Row: {id, source_id, target_id, relation, memory_id, valid, created_at_ms, invalidated_at_ms,
        invalidated_by} (``created_at`` / ``invalidated_at`` datetimes or ISO strings are accepted too).
        Rows whose endpoints are not in the graph (or not in the scope) are not written: after writing the
        others, NotFoundError lists them (project the entities first; the outbox retries).
        """
        fields = _scope_fields(scope)
        stamp = now_ms()
        rows = []
        for r in relations or []:
            rid = r.get("id")
            if not isinstance(rid, str) or not rid:
                raise InvalidInputError(f"relation id must be a non-empty string, got {rid!r}")
            name = r.get("relation", r.get("name"))
            if not isinstance(name, str) or not name.strip():
                raise InvalidInputError(f"relation {rid}: relation must be a non-empty string")
            for key in ("source_id", "target_id"):
                if not isinstance(r.get(key), str) or not r.get(key):
                    raise InvalidInputError(f"relation {rid}: {key} must be a non-empty string")
            valid = r.get("valid", True)
            if len(rid) > MAX_TEXT_CHARS:
                raise InvalidInputError(f"relation id longer than {MAX_TEXT_CHARS} characters")
            rows.append({
                "id": rid, "source_id": r["source_id"], "target_id": r["target_id"],
                "relation": _clip(name, MAX_NAME_CHARS, "relation name"),
                "memory_id": _clip(r.get("memory_id"), MAX_TEXT_CHARS, "memory id"),
                "valid": True if valid is None else bool(valid),
                "created_at_ms": to_ms(r.get("created_at_ms", r.get("created_at"))) or stamp,
                "invalidated_at_ms": to_ms(r.get("invalidated_at_ms", r.get("invalidated_at"))),
                "invalidated_by": _clip(r.get("invalidated_by"), MAX_TEXT_CHARS, "invalidated_by"), **fields,
            })
        if not rows:
            return
        params: dict[str, Any] = {}
        conds = _scope_match(scope, ("s", "t"), params)
        query = (
            "UNWIND $rows AS row "
            "MATCH (s:Entity {id: row.source_id}) "
            "MATCH (t:Entity {id: row.target_id})" + _where(conds) + " "
            "MERGE (s)-[r:RELATES {id: row.id}]->(t) "
            "ON CREATE SET r.created_at_ms = row.created_at_ms "
            "SET r.name = row.relation, r.memory_id = row.memory_id, r.valid = row.valid, "
            "r.invalidated_at_ms = row.invalidated_at_ms, r.invalidated_by = row.invalidated_by, "
            "r.user_id = row.user_id, r.agent_id = row.agent_id, r.run_id = row.run_id "
            "RETURN collect(r.id) AS ids"
        )
        written: set[str] = set()
        for chunk in _chunks(rows):
            for rec in self._run("upsert_relations", query, {**params, "rows": chunk}):
                written.update(rec["ids"] or [])
        missing = [r["id"] for r in rows if r["id"] not in written]
        if missing:
            raise NotFoundError(
                f"{len(missing)} relation(s) not projected because their entities are not in the graph for "
                f"{scope.key()}: {missing[:5]}; project the entities first (the outbox retries)")

    def invalidate_relations(self, relation_ids: list[str], *, trace_id: str | None = None,
                             at_ms: int | None = None) -> None:
        """Soft-invalidate: valid=false, invalidated_at_ms, invalidated_by (= trace_id). Relations that are
        already invalid keep their first invalidation. Unknown ids are ignored."""
        ids = _ids(relation_ids, "relation ids")
        at = to_ms(at_ms) if at_ms is not None else now_ms()
        query = ("MATCH ()-[r:RELATES]->() WHERE r.id IN $ids AND r.valid = true "
                 "SET r.valid = false, r.invalidated_at_ms = $at, r.invalidated_by = $by")
        by = _clip(trace_id, MAX_TEXT_CHARS, "invalidated_by")
        for chunk in _chunks(ids):
            self._run("invalidate_relations", query, {"ids": chunk, "at": at, "by": by})

    def delete_relations(self, relation_ids: list[str]) -> None:
        ids = _ids(relation_ids, "relation ids")
        for chunk in _chunks(ids):
            self._run("delete_relations", "MATCH ()-[r:RELATES]->() WHERE r.id IN $ids DELETE r", {"ids": chunk})

    def delete_entities(self, entity_ids: list[str]) -> None:
        """DETACH DELETE: the entities and every relation touching them. Unknown ids are ignored."""
        ids = _ids(entity_ids, "entity ids")
        for chunk in _chunks(ids):
            self._run("delete_entities", "MATCH (n:Entity) WHERE n.id IN $ids DETACH DELETE n", {"ids": chunk})

    def delete_scope(self, scope: Scope) -> None:
        """Remove every entity of the scope (scope rule as everywhere) and their relations."""
        params: dict[str, Any] = {}
        conds = _scope_match(scope, ("n",), params)
        self._run("delete_scope", "MATCH (n:Entity)" + _where(conds) + " DETACH DELETE n", params)

    def reset(self) -> None:
        """Remove every MemoryX entity and relation (other labels in a shared Neo4j are left alone)."""
        self._run("reset", "MATCH (n:Entity) DETACH DELETE n")

    # --- reads --------------------------------------------------------------------------------------
    def neighbourhood(self, scope: Scope, entity_ids: list[str], *, depth: int = 1,
                      relation_names: list[str] | None = None, include_invalid: bool = False,
                      limit: int = 200) -> list[dict]:
        """Relations reachable from the seed entities, breadth first, never leaving the scope.

        * depth 0: nothing; depth 1: relations incident to a seed (``hops`` 1); depth 2: plus relations
          incident to the entities those reach (``hops`` 2). Direction is ignored for reachability; each
          relation is reported once, with its stored direction and its smallest hop count;
        * only relations that pass the filters are walked: invalid ones are neither returned nor
          traversed unless `include_invalid`; with `relation_names` (exact names) only those are;
        * seeds outside the scope are ignored; at most `limit` relations, nearest hops first and, within a
          hop, newest first.

        Each item: {id, source_id, source, relation, target_id, target, memory_id, valid, hops,
        created_at_ms, invalidated_at_ms, invalidated_by, source_type, target_type}.
        """
        if not isinstance(depth, int) or isinstance(depth, bool) or not 0 <= depth <= MAX_DEPTH:
            raise InvalidInputError(f"depth must be an integer from 0 to {MAX_DEPTH}, got {depth!r}")
        frontier = _ids(entity_ids, "entity ids")
        if scope is None:
            raise ScopeError("neighbourhood needs a scope")
        if isinstance(relation_names, str):
            relation_names = [relation_names]
        if relation_names is not None:
            names = [n for n in relation_names if isinstance(n, str) and n]
            if not names:
                return []
        else:
            names = None
        if depth == 0 or not frontier or limit <= 0:
            return []
        params: dict[str, Any] = {}
        conds = _scope_match(scope, ("s", "r", "o"), params)
        if not include_invalid:
            conds.append("r.valid = true")
        if names is not None:
            conds.append("r.name IN $names")
            params["names"] = names
        query = (
            "MATCH (s:Entity) WHERE s.id IN $ids "
            "MATCH (s)-[r:RELATES]-(o:Entity)" + _where(conds + ["NOT r.id IN $seen"]) + " "
            "WITH DISTINCT r "
            "WITH r, startNode(r) AS a, endNode(r) AS b "
            "ORDER BY r.created_at_ms DESC, r.id LIMIT $limit "
            # rows packed PAGE to a record: the Python driver decodes a few records much faster than many,
            # and FalkorDB cannot send a record over 64 KB (names are capped, see _clip)
            "WITH collect([r.id, a.id, a.name, a.entity_type, r.name, b.id, b.name, b.entity_type, "
            "r.memory_id, r.valid, r.created_at_ms, r.invalidated_at_ms, r.invalidated_by]) AS items "
            "UNWIND range(0, size(items) - 1, $page) AS i "
            "RETURN items[i..i + $page] AS rows"
        )
        out: list[dict] = []
        seen_rel: set[str] = set()
        visited: set[str] = set(frontier)
        for hop in range(1, depth + 1):
            if not frontier or len(out) >= limit:
                break
            result = self._run("neighbourhood", query, {**params, "ids": frontier, "seen": sorted(seen_rel),
                                                        "limit": limit - len(out), "page": PAGE})
            items = [values for record in result for values in (record["rows"] or [])]
            items.sort(key=lambda v: (-(v[10] or 0), v[0]))
            nxt: list[str] = []
            for values in items:
                row = dict(zip(_NEIGHBOUR_KEYS, values))
                if row["id"] in seen_rel:
                    continue
                seen_rel.add(row["id"])
                row["valid"] = True if row["valid"] is None else bool(row["valid"])
                row["hops"] = hop
                out.append(row)
                for end in (row["source_id"], row["target_id"]):
                    if end not in visited:
                        visited.add(end)
                        nxt.append(end)
            frontier = nxt
        return out[:limit]

    def counts(self, scope: Scope | None = None) -> dict:
        """{"entities", "relations" (all stored, valid or not), "valid_relations"} in the scope (None: all)."""
        params: dict[str, Any] = {}
        conds = _scope_match(scope, ("n",), params)
        ents = self._run("counts", "MATCH (n:Entity)" + _where(conds) + " RETURN count(n) AS c", params)
        rels = self._run("counts", "MATCH (n:Entity)-[r:RELATES]->(:Entity)" + _where(conds) +
                         " RETURN count(r) AS c, sum(CASE WHEN r.valid = true THEN 1 ELSE 0 END) AS v", params)
        return {"entities": int(ents[0]["c"]) if ents else 0,
                "relations": int(rels[0]["c"] or 0) if rels else 0,
                "valid_relations": int(rels[0]["v"] or 0) if rels else 0}


# ----------------------------------------------------------------------------------------------- factory


def make_graph_store(settings) -> tuple[GraphStore | None, "EmbeddedFalkorDB | None"]:
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
    from memoryx.stores.falkordb_server import EmbeddedFalkorDB

    server = EmbeddedFalkorDB(settings.data_dir, port=settings.falkordb_port, bolt_port=settings.falkordb_bolt_port)
    url = server.start()
    try:
        store = GraphStore(url, "", "", flavor="falkordb", reconnect=server.start)
        store.ensure_indexes()
    except Exception:
        server.stop()
        raise
    return store, server
