"""The PostgreSQL backend: points in the same PostgreSQL as the system of record, through pgvector.

Several `memoryx serve` workers share one memory through it (the embedded engine admits one process per data
directory). One table per collection, ``<prefix>_vec_memories`` and ``<prefix>_vec_entities``:

* ``pid`` (the point id), the scope columns ``user_id``, ``agent_id``, ``run_id``, ``group_id`` (one btree
  index each: every query carries the scope), ``embedding vector(dims)`` with an HNSW index (cosine),
  ``terms int[]`` / ``tfs real[]`` (the BM25 sparse vector of `core.text.sparse_vector`; a GIN index on
  ``terms``) and ``payload jsonb`` (the same payload as the Qdrant backends; filters are SQL/JSON paths over
  it, sql_filters.py).
* Dense search within a scope is exact (the scope's rows through its index, every distance computed), which
  is what the embedded engine does without HNSW and gives every backend the same ranking. pgvector 0.6
  filters *after* an HNSW scan (ef_search candidates, then the WHERE clause), so a small scope in a large
  table would come back short; the HNSW index serves scopes larger than `EXACT_SCOPE_ROWS`, with a wide
  candidate list, and an answer that comes back short is asked again exactly.
* Keyword search is BM25 with Qdrant's IDF, ``ln(1 + (N - n + 0.5) / (n + 0.5))``, where N and n are counted
  over the caller's scope only (as the other backends' ``IdfParams(corpus=...)``), in one statement.

Writes are idempotent upserts on ``pid`` taken in id order (two workers upserting the same points never
deadlock); the tables are created once under an advisory lock, so workers starting together do not race.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from memoryx.errors import InvalidInputError, StoreUnavailableError
from memoryx.stores.vectors.base import DENSE, SPARSE, VectorHit, VectorStore, batched, hit_id
from memoryx.stores.vectors.sql_filters import TRUE, SqlFilter, sql_dialect

log = logging.getLogger(__name__)

# A scope with at least this many points is searched through the HNSW index (below: exactly, which at this
# size costs a few milliseconds and never misses a point).
EXACT_SCOPE_ROWS = 20_000
HNSW_EF_SEARCH = 400  # candidates of an HNSW scan: pgvector filters after the scan
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")
_SCOPE_COLUMNS = ("user_id", "agent_id", "run_id", "group_id")


def postgres_url(url: str) -> str:
    """The SQLAlchemy URL of the psycopg 3 driver for a PostgreSQL URL; anything else is refused."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise InvalidInputError(f"MEMORYX_SQL_URL={url!r} is not a database URL: {exc}") from exc
    if parsed.get_backend_name() != "postgresql":
        raise InvalidInputError(
            "MEMORYX_VECTOR_BACKEND=pgvector keeps the vectors in the PostgreSQL of the system of record: set "
            "MEMORYX_SQL_URL=postgresql+psycopg://user@host/db (it is "
            f"{'unset (SQLite)' if parsed.get_backend_name() == 'sqlite' else parsed.get_backend_name()}).")
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def _vector_text(v: list[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


class PgVectorStore(VectorStore):
    """Memories and entities in PostgreSQL with pgvector. Thread-safe (a connection pool); any number of
    processes may open the same tables."""

    def __init__(self, url: str, dims: int, *, prefix: str = "memoryx", engine: sa.Engine | None = None,
                 hnsw: bool = True, chunk_chars: int = 0, pool_size: int = 4,
                 focus_chars: int = 0):
        super().__init__(dims, prefix=prefix, chunk_chars=chunk_chars, focus_chars=focus_chars)
        self.hnsw = hnsw  # without the index, a large scope's "HNSW scan" is an exact sort: slower, same answer
        if not _IDENT.match(prefix):
            raise InvalidInputError(f"MEMORYX_COLLECTION_PREFIX={prefix!r}: the pgvector backend names tables after "
                                    "it; use letters, digits and underscores (at most 41).")
        self.url = postgres_url(url)
        self.safe_url = make_url(self.url).render_as_string(hide_password=True)
        # a hard cap (MEMORYX_PG_POOL_SIZE): a worker's connections must add up below max_connections
        self.engine = engine or sa.create_engine(self.url, pool_pre_ping=True, pool_size=pool_size, max_overflow=0,
                                                 connect_args={"application_name": "memoryx"})
        self._memories = f"{prefix}_vec_memories"
        self._entities = f"{prefix}_vec_entities"
        self._dialect = sql_dialect()
        try:
            self._ensure_tables()
        except BaseException:
            self.engine.dispose()
            raise

    # -- schema ---------------------------------------------------------------------------------------
    def _connect(self):
        """A connection in a transaction (writes, and the HNSW scan's transaction-local setting)."""
        if self._closed:
            raise StoreUnavailableError(f"The pgvector store at {self.safe_url} is closed")
        try:
            return self.engine.begin()
        except sa.exc.OperationalError as exc:
            raise StoreUnavailableError(f"PostgreSQL at {self.safe_url} is not reachable: {exc.orig}") from exc

    def _read(self):
        """A connection without a transaction: a read is one statement, so BEGIN and COMMIT would only add
        two round trips to it."""
        if self._closed:
            raise StoreUnavailableError(f"The pgvector store at {self.safe_url} is closed")
        try:
            return self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        except sa.exc.OperationalError as exc:
            raise StoreUnavailableError(f"PostgreSQL at {self.safe_url} is not reachable: {exc.orig}") from exc

    def _ensure_tables(self) -> None:
        with self._connect() as conn:
            # one creator at a time: workers starting together would race on CREATE ... IF NOT EXISTS
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('memoryx pgvector schema'))"))
            try:
                conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
            except sa.exc.DBAPIError as exc:
                raise StoreUnavailableError(
                    f"PostgreSQL at {self.safe_url} has no pgvector extension, or this user may not create it "
                    f"({exc.orig}). Install pgvector and run CREATE EXTENSION vector as a superuser once, or use "
                    "MEMORYX_VECTOR_BACKEND=edge.") from exc
            for table in (self._memories, self._entities):
                conn.execute(sa.text(
                    f"CREATE TABLE IF NOT EXISTS {table} (pid uuid PRIMARY KEY, user_id text, agent_id text, "
                    f"run_id text, group_id text, embedding vector({self.dims}) NOT NULL, "
                    "terms int[] NOT NULL DEFAULT '{}', tfs real[] NOT NULL DEFAULT '{}', payload jsonb NOT NULL)"))
                for col in _SCOPE_COLUMNS:
                    conn.execute(sa.text(f"CREATE INDEX IF NOT EXISTS {table}_{col} ON {table} ({col})"))
                conn.execute(sa.text(f"CREATE INDEX IF NOT EXISTS {table}_terms ON {table} USING gin (terms)"))
                if self.hnsw:
                    conn.execute(sa.text(f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} "
                                         "USING hnsw (embedding vector_cosine_ops)"))
                have = conn.execute(sa.text(
                    "SELECT atttypmod FROM pg_attribute WHERE attrelid = CAST(:t AS regclass) AND attname = 'embedding'"),
                    {"t": table}).scalar()
                if have != self.dims:
                    raise StoreUnavailableError(
                        f"The pgvector table {table} holds vectors of {have} dimensions, the embedding model gives "
                        f"{self.dims}. Keep MEMORYX_EMBEDDING_MODEL/MEMORYX_EMBEDDING_DIMS, or choose another "
                        "MEMORYX_COLLECTION_PREFIX and reindex.")

    # -- primitives -----------------------------------------------------------------------------------
    def _point(self, pid: str, vectors: dict[str, Any], payload: dict) -> dict:
        ids, vals = vectors.get(SPARSE, ([], []))
        row = {"pid": pid, "embedding": _vector_text(vectors[DENSE]), "terms": list(ids), "tfs": list(vals),
               "payload": json.dumps(payload, ensure_ascii=False)}
        row.update({k: payload.get(k) or None for k in _SCOPE_COLUMNS})
        return row

    def _upsert(self, table: str, points: list[dict]) -> None:
        points = sorted(points, key=lambda p: p["pid"])  # one lock order for every writer
        sql = sa.text(
            f"INSERT INTO {table} (pid, user_id, agent_id, run_id, group_id, embedding, terms, tfs, payload) "
            "VALUES (CAST(:pid AS uuid), :user_id, :agent_id, :run_id, :group_id, CAST(:embedding AS vector), "
            "CAST(:terms AS int[]), CAST(:tfs AS real[]), CAST(:payload AS jsonb)) "
            "ON CONFLICT (pid) DO UPDATE SET user_id = EXCLUDED.user_id, agent_id = EXCLUDED.agent_id, "
            "run_id = EXCLUDED.run_id, group_id = EXCLUDED.group_id, embedding = EXCLUDED.embedding, "
            "terms = EXCLUDED.terms, tfs = EXCLUDED.tfs, payload = EXCLUDED.payload")
        with self._connect() as conn:
            for chunk in batched(points):
                conn.execute(sql, list(chunk))

    def _delete(self, table: str, pids: list[str]) -> None:
        with self._connect() as conn:
            for chunk in batched(sorted(pids)):
                conn.execute(sa.text(f"DELETE FROM {table} WHERE pid = ANY(CAST(:ids AS uuid[]))"), {"ids": list(chunk)})

    @staticmethod
    def _where(flt: SqlFilter | None) -> SqlFilter:
        return flt if flt is not None else TRUE

    def _dense(self, table: str, vector, flt, limit: int, threshold) -> list[VectorHit]:
        where = self._where(flt)
        params = {**where.params, "q": _vector_text(vector), "k": limit, "thr": threshold, "cap": EXACT_SCOPE_ROWS}
        thr = "" if threshold is None else " AND 1 - (embedding <=> CAST(:q AS vector)) >= :thr"
        # One round trip for the usual case: the exact search answers only when the filtered rows stay under
        # EXACT_SCOPE_ROWS (counted no further than that). "+ 0" is an expression the HNSW index cannot order
        # by, so the planner goes through the scope's own index.
        # the size row always comes back (LEFT JOIN): its n says whether the exact search ran
        exact = sa.text(
            f"WITH size AS (SELECT count(*) AS n FROM (SELECT 1 FROM {table} WHERE {where.sql} LIMIT :cap) s) "
            f"SELECT size.n, hit.* FROM size LEFT JOIN LATERAL ("
            f"SELECT pid, payload, 1 - (embedding <=> CAST(:q AS vector)) AS score FROM {table} "
            f"WHERE ({where.sql}){thr} AND size.n < :cap "
            f"ORDER BY (embedding <=> CAST(:q AS vector)) + 0, pid LIMIT :k) hit ON true")
        with self._read() as conn:
            rows = conn.execute(exact, params).all()
        if rows[0].n < EXACT_SCOPE_ROWS:
            return [VectorHit(hit_id(r.pid, r.payload), float(r.score), r.payload) for r in rows if r.pid is not None]
        with self._connect() as conn:
            hits = self._dense_hnsw(conn, table, where, params, limit, threshold)
            if hits is not None:
                return hits
            rows = conn.execute(exact, {**params, "cap": 1 << 62}).all()  # the scan came back short: exactly
        return [VectorHit(hit_id(r.pid, r.payload), float(r.score), r.payload) for r in rows if r.pid is not None]

    def _dense_hnsw(self, conn, table: str, where: SqlFilter, params: dict, limit: int,
                    threshold) -> list[VectorHit] | None:
        """The HNSW scan; None when it found fewer than `limit` rows passing the filter (asked again exactly)."""
        conn.execute(sa.text("SELECT set_config('hnsw.ef_search', :ef, true)"),
                     {"ef": str(max(HNSW_EF_SEARCH, limit))})
        rows = conn.execute(sa.text(
            f"SELECT pid, payload, 1 - (embedding <=> CAST(:q AS vector)) AS score FROM {table} "
            f"WHERE {where.sql} ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k"), params).all()
        if len(rows) < limit:
            return None
        return [VectorHit(hit_id(r.pid, r.payload), float(r.score), r.payload) for r in rows
                if threshold is None or float(r.score) >= threshold]

    def _vectors(self, table: str, pids: list[str]) -> dict[str, list[float]]:
        with self._read() as conn:
            rows = conn.execute(sa.text(f"SELECT pid, embedding::text AS v FROM {table} "
                                        "WHERE pid = ANY(CAST(:ids AS uuid[]))"), {"ids": pids}).all()
        return {str(r.pid): json.loads(r.v) for r in rows}

    def _sparse(self, table: str, ids, values, flt, corpus, limit: int) -> list[VectorHit]:
        where, scope = self._where(flt), self._where(corpus)
        # N and n (document frequency) are counted over the scope (`corpus`), the scores over the filtered rows;
        # N counts the rows with keywords (a long memory's windows have none: they are no documents)
        sql = sa.text(
            f"WITH q AS (SELECT * FROM unnest(CAST(:qids AS int[]), CAST(:qvals AS real[])) AS q(term, w)), "
            f"n AS (SELECT count(*)::float8 AS n FROM {table} WHERE ({scope.sql}) AND cardinality(terms) > 0), "
            f"df AS (SELECT u.term, count(*)::float8 AS df FROM {table} c, unnest(c.terms) AS u(term) "
            f"       WHERE ({scope.sql}) AND c.terms && CAST(:qids AS int[]) AND u.term = ANY(CAST(:qids AS int[])) "
            f"       GROUP BY u.term), "
            f"idf AS (SELECT q.term, q.w * ln(1 + (n.n - df.df + 0.5) / (df.df + 0.5)) AS weight "
            f"        FROM q JOIN df ON df.term = q.term CROSS JOIN n) "
            f"SELECT t.pid, t.payload, sum(d.tf * idf.weight) AS score "
            f"FROM {table} t CROSS JOIN LATERAL unnest(t.terms, t.tfs) AS d(term, tf) JOIN idf ON idf.term = d.term "
            f"WHERE ({where.sql}) AND t.terms && CAST(:qids AS int[]) "
            f"GROUP BY t.pid ORDER BY score DESC, t.pid LIMIT :k")
        params = {**scope.params, **where.params, "qids": list(ids), "qvals": list(values), "k": limit}
        with self._read() as conn:
            rows = conn.execute(sql, params).all()
        return [VectorHit(hit_id(r.pid, r.payload), float(r.score), r.payload) for r in rows]

    def _count(self, table: str, flt) -> int:
        where = self._where(flt)
        with self._read() as conn:
            return int(conn.execute(sa.text(f"SELECT count(*) FROM {table} WHERE {where.sql}"), where.params).scalar())

    def _delete_where(self, table: str, flt) -> None:
        where = self._where(flt)
        with self._connect() as conn:
            conn.execute(sa.text(f"DELETE FROM {table} WHERE {where.sql}"), where.params)

    def _clear(self, table: str) -> None:
        with self._connect() as conn:
            conn.execute(sa.text(f"DELETE FROM {table}"))

    def _shutdown(self) -> None:
        self._closed = True
        self.engine.dispose()

    # -- pgvector-only --------------------------------------------------------------------------------
    def table_bytes(self) -> dict[str, int]:
        """{table: bytes on disk with its indexes and TOAST} of both collections (for sizing)."""
        with self._connect() as conn:
            return {t: int(conn.execute(sa.text("SELECT pg_total_relation_size(CAST(:t AS regclass))"),
                                        {"t": t}).scalar()) for t in (self._memories, self._entities)}

    def __repr__(self) -> str:
        return f"PgVectorStore(url={self.safe_url!r}, dims={self.dims}, prefix={self.prefix!r})"
