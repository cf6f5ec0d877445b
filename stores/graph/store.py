"""Graph projection: entities and relations as a property graph, one portable Cypher over a transport.

One model, portable between Neo4j and (embedded) FalkorDB:

* nodes ``(:Entity {id, name, normalized_name, entity_type, user_id, agent_id, run_id, created_at_ms,
  updated_at_ms})``; a scope field the entity's scope does not set is stored as ``''`` (never null);
* one relationship type ``[:RELATES {id, name, memory_id, valid, created_at_ms, invalidated_at_ms,
  invalidated_by, user_id, agent_id, run_id}]``. The relation text (any language, quotes, punctuation) is
  the *data* property ``name`` and is never part of a query's text;
* times are epoch milliseconds (FalkorDB's Bolt has no ``datetime()``); ids are our own uuids (no
  ``elementId()``), so the same Cypher runs over both transports;
* scope matching is the rule every MemoryX store uses: exact equality on each field the `Scope` sets
  (``Scope(user_id='a')`` sees a's entities of every agent/run; ``Scope(user_id='a', agent_id='x')`` only
  those with agent x). No prefix, case or partial matching.

Statements go through a `GraphTransport` (transport.py): `NativeTransport` (FalkorDB's own protocol; the
embedded default) or `BoltTransport` (Neo4j), whose dialect (dialect.py) decides how parameters travel and
how indexes are created.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Literal

from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.core.text import normalize_name
from memoryx.errors import InvalidInputError, NotFoundError, ScopeError
from memoryx.stores.graph.bolt import BoltTransport
from memoryx.stores.graph.dialect import CypherDialect, DialectName
from memoryx.stores.graph.native import NATIVE_SCHEMES, NativeTransport
from memoryx.stores.graph.transport import GraphTransport
from memoryx.stores.graph.values import chunks, clip, now_ms, to_ms, unique_ids

MAX_NAME_CHARS = 512  # entity / relation names longer than this are stored clipped (full text stays in SQL)
MAX_TEXT_CHARS = 256  # ids, types, memory ids, trace ids
MAX_DEPTH = 2
_NEIGHBOUR_KEYS = ("id", "source_id", "source", "source_type", "relation", "target_id", "target", "target_type",
                   "memory_id", "valid", "created_at_ms", "invalidated_at_ms", "invalidated_by",
                   "valid_at_ms", "invalid_at_ms")
_NEIGHBOUR_ROW = ("[r.id, a.id, a.name, a.entity_type, r.name, b.id, b.name, b.entity_type, "
                  "r.memory_id, r.valid, r.created_at_ms, r.invalidated_at_ms, r.invalidated_by, "
                  "r.valid_at_ms, r.invalid_at_ms]")
_INDEXES = (  # (kind, label/type, property, neo4j index name)
    ("node", "Entity", "id", "memoryx_entity_id"),
    ("node", "Entity", "user_id", "memoryx_entity_user_id"),
    ("node", "Entity", "agent_id", "memoryx_entity_agent_id"),
    ("node", "Entity", "run_id", "memoryx_entity_run_id"),
    ("node", "Entity", "group_id", "memoryx_entity_group_id"),
    ("rel", "RELATES", "id", "memoryx_relates_id"),
)


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
    if scope.group_id is None:  # no group named: group chats' entities stay out (Scope.match); older nodes lack it
        conds.extend(f"coalesce({var}.group_id, '') = ''" for var in variables)
    return conds


def _where(conds: list[str]) -> str:
    return (" WHERE " + " AND ".join(conds)) if conds else ""


class GraphStore:
    """The graph projection (Neo4j or FalkorDB). Thread-safe; one per process is enough."""

    def __init__(self, transport: GraphTransport | str, username: str = "", password: str = "", *,
                 flavor: Literal["auto", "falkordb", "neo4j"] = "auto", reconnect: Callable[[], str] | None = None,
                 connect_timeout: float = 5.0, read_timeout: float = 60.0):
        """`transport`: a connected `GraphTransport`, or a URL: ``unix://…`` / ``redis://…`` for FalkorDB's
        native protocol (`NativeTransport`), ``bolt://…`` / ``neo4j://…`` for `BoltTransport`; the other
        arguments configure it (`flavor` 'auto' detects a Bolt server; `reconnect` may restart an embedded
        server and returns its new URL)."""
        if isinstance(transport, str) and transport.split("://", 1)[0] in NATIVE_SCHEMES:
            transport = NativeTransport(transport, password or None, username=username or None,
                                        reconnect=reconnect, connect_timeout=connect_timeout,
                                        read_timeout=read_timeout)
        elif isinstance(transport, str):
            transport = BoltTransport(transport, username, password, flavor=flavor, reconnect=reconnect,
                                      connect_timeout=connect_timeout, read_timeout=read_timeout)
        self.transport = transport

    @property
    def url(self) -> str:
        return self.transport.url

    @property
    def dialect(self) -> CypherDialect:
        return self.transport.dialect

    @property
    def flavor(self) -> DialectName:
        return self.transport.dialect.name

    @property
    def graph(self):
        """LangChain's `Neo4jGraph` behind a Bolt transport (for LangChain integrations), else None."""
        return self.transport.graph if isinstance(self.transport, BoltTransport) else None

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, op: str, query: str, params: dict[str, Any] | None = None) -> list[dict]:
        """One auto-commit statement; every failure raises StoreUnavailableError naming `op`."""
        return self.transport.run(op, query, params or {})

    # --- schema -------------------------------------------------------------------------------------
    def ensure_indexes(self) -> None:
        """Indexes on Entity(id, user_id, agent_id, run_id) and RELATES(id). Idempotent."""
        existing: set[tuple[str, str, str]] = set()
        if not self.dialect.creates_indexes_idempotently:
            for row in self._run("ensure_indexes",
                                 "CALL db.indexes() YIELD label, properties, entitytype "
                                 "RETURN label, properties, entitytype"):
                kind = "rel" if str(row.get("entitytype", "")).upper().startswith("REL") else "node"
                for prop in row.get("properties") or []:
                    existing.add((kind, row.get("label"), prop))
        for kind, label, prop, name in _INDEXES:
            if (kind, label, prop) not in existing:
                self._run("ensure_indexes", self.dialect.create_index(kind, label, prop, name))
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
                "id": eid, "name": clip(name, MAX_NAME_CHARS, "entity name"),
                "normalized_name": clip(e.get("normalized_name") or normalize_name(name), MAX_NAME_CHARS,
                                         "entity name"),
                "entity_type": clip(e.get("entity_type") or e.get("type") or "entity", MAX_TEXT_CHARS,
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
            "n.group_id = row.group_id, n.created_at_ms = row.created_at_ms "
            "WITH n, row WHERE n.user_id = row.user_id AND n.agent_id = row.agent_id AND n.run_id = row.run_id "
            "AND coalesce(n.group_id, '') = row.group_id "
            "SET n.name = row.name, n.normalized_name = row.normalized_name, n.entity_type = row.entity_type, "
            "n.updated_at_ms = row.updated_at_ms "
            "RETURN collect(n.id) AS ids"
        )
        written: set[str] = set()
        for chunk in chunks(rows):
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
                "relation": clip(name, MAX_NAME_CHARS, "relation name"),
                "memory_id": clip(r.get("memory_id"), MAX_TEXT_CHARS, "memory id"),
                "valid": True if valid is None else bool(valid),
                "created_at_ms": to_ms(r.get("created_at_ms", r.get("created_at"))) or stamp,
                "invalidated_at_ms": to_ms(r.get("invalidated_at_ms", r.get("invalidated_at"))),
                "invalidated_by": clip(r.get("invalidated_by"), MAX_TEXT_CHARS, "invalidated_by"),
                "valid_at_ms": to_ms(r.get("valid_at_ms", r.get("valid_at"))),  # event time
                "invalid_at_ms": to_ms(r.get("invalid_at_ms", r.get("invalid_at"))), **fields,
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
            "r.valid_at_ms = row.valid_at_ms, r.invalid_at_ms = row.invalid_at_ms, "
            "r.user_id = row.user_id, r.agent_id = row.agent_id, r.run_id = row.run_id, r.group_id = row.group_id "
            "RETURN collect(r.id) AS ids"
        )
        written: set[str] = set()
        for chunk in chunks(rows):
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
        ids = unique_ids(relation_ids, "relation ids")
        at = to_ms(at_ms) if at_ms is not None else now_ms()
        query = ("MATCH ()-[r:RELATES]->() WHERE r.id IN $ids AND r.valid = true "
                 "SET r.valid = false, r.invalidated_at_ms = $at, r.invalidated_by = $by")
        by = clip(trace_id, MAX_TEXT_CHARS, "invalidated_by")
        for chunk in chunks(ids):
            self._run("invalidate_relations", query, {"ids": chunk, "at": at, "by": by})

    def delete_relations(self, relation_ids: list[str]) -> None:
        ids = unique_ids(relation_ids, "relation ids")
        for chunk in chunks(ids):
            self._run("delete_relations", "MATCH ()-[r:RELATES]->() WHERE r.id IN $ids DELETE r", {"ids": chunk})

    def delete_entities(self, entity_ids: list[str]) -> None:
        """DETACH DELETE: the entities and every relation touching them. Unknown ids are ignored."""
        ids = unique_ids(entity_ids, "entity ids")
        for chunk in chunks(ids):
            self._run("delete_entities", "MATCH (n:Entity) WHERE n.id IN $ids DETACH DELETE n", {"ids": chunk})

    def delete_scope(self, scope: Scope) -> None:
        """Remove every entity of the scope (scope rule as everywhere) and their relations."""
        params: dict[str, Any] = {}
        conds = _scope_match(scope, ("n",), params)
        self._run("delete_scope", "MATCH (n:Entity)" + _where(conds) + " DETACH DELETE n", params)

    def compact(self) -> bool:
        """Make deleted entities and relations leave the server's files: FalkorDB over its native protocol
        rewrites its append-only file (and waits for it). Neo4j / Bolt: nothing we can do from a client
        (False); its store files are outside MemoryX's data directory."""
        if isinstance(self.transport, NativeTransport):
            return self.transport.rewrite_aof()
        return False

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
        frontier = unique_ids(entity_ids, "entity ids")
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
            "ORDER BY r.created_at_ms DESC, r.id LIMIT $limit"
        )
        out: list[dict] = []
        seen_rel: set[str] = set()
        visited: set[str] = set(frontier)
        for hop in range(1, depth + 1):
            if not frontier or len(out) >= limit:
                break
            items = self.transport.run_rows("neighbourhood", query, _NEIGHBOUR_ROW,
                                            {**params, "ids": frontier, "seen": sorted(seen_rel),
                                             "limit": limit - len(out)})
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
