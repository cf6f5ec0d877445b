"""Bulk ingest: `Memory.add_many` / `AsyncMemory.add_many`, the REST batch route and `memoryx import`.

Each item is a dict of `add`'s own arguments (messages, user_id, agent_id, run_id, metadata, and optionally
trace_id); the answer is one result per item, in order. An item that fails (bad input, a scope error, a
store error while its chunk was written) gets `{"results": [], "error": {"type", "message"}, "trace_id"}` as
its result; the other items go on.

infer=False is the add graph's store_raw path (nodes/store_raw.py) done for many items at once, with the same
records: the raw input saved under each item's trace id, one episodic memory per non-system message with the
caller's metadata plus role/name/timestamp, deterministic ids uuid5(trace id/raw index) so a replay adds
nothing twice, exact duplicates of live memories of the scope skipped, an ADD history row per memory, and
the vector projection brought in step through the outbox. What changes is the cost: per chunk of
`bulk_chunk_size` messages, one embedding call, one SQL write transaction and one vector upsert.

infer=True runs the add graph per item: the items of one scope in order (a later message may update what an
earlier one said), different scopes in parallel on a small thread pool (`bulk_workers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from memoryx.core.runs import deterministic_id
from memoryx.core.scope import Scope
from memoryx.core.text import memory_hash
from memoryx.errors import InvalidInputError
from memoryx.ingest.messages import check_limits, normalize_messages, split_long
from memoryx.ingest.speakers import event_time, participant_scope, speaker_meta
from memoryx.stores.sql.schema import HistoryRow, MemoryRow, OutboxRow, RawInputRow, memory_dict
from memoryx.stores.sql.values import check_metadata, new_id, utc_now
from memoryx.stores.vectors.multilingual import mostly_cjk, owner_scope

log = logging.getLogger(__name__)

ITEM_KEYS = ("messages", "user_id", "agent_id", "run_id", "metadata", "trace_id", "group_id")
Progress = Callable[[int], None]


def no_relations() -> dict:
    return {"added_entities": [], "deleted_entities": []}


def error_result(exc: BaseException, trace_id: str | None = None) -> dict:
    """An item's failure as its result (the batch goes on)."""
    message = str(exc.args[0]) if exc.args else type(exc).__name__
    trace_id = trace_id or getattr(exc, "trace_id", None)
    return {"results": [], "relations": no_relations(), "trace_id": trace_id,
            "error": {"type": type(exc).__name__, "message": message}}


def check_items(items: Any) -> list:
    if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
        raise InvalidInputError("items must be a list of dicts of add()'s arguments, e.g. "
                                "[{'messages': 'I live in Berlin', 'user_id': 'alice'}].")
    return list(items)


def item_args(item: Any) -> dict:
    """An item's arguments for add(), checked: a dict of ITEM_KEYS only, messages present."""
    if not isinstance(item, dict):
        raise InvalidInputError(f"each item must be a dict of add()'s arguments, got {type(item).__name__}")
    unknown = sorted(set(item) - set(ITEM_KEYS))
    if unknown:
        raise InvalidInputError(f"unknown item field(s) {unknown}; an item takes {', '.join(ITEM_KEYS)}")
    if item.get("messages") is None:
        raise InvalidInputError("item has no messages; pass a string or a list of {'role', 'content'} dicts")
    return {k: item.get(k) for k in ITEM_KEYS}


def item_scope(args: dict) -> Scope:
    return Scope(user_id=args["user_id"], agent_id=args["agent_id"], run_id=args["run_id"],
                 group_id=args.get("group_id"))


# --------------------------------------------------------------------------------------------------------
# infer=False: batched store_raw
# --------------------------------------------------------------------------------------------------------


@dataclass
class _Item:
    index: int
    trace_id: str
    scope: Scope
    raw: list[dict]          # the normalised messages, as saved in raw_inputs (validate_input does the same)
    metadata: dict
    memories: list[dict] = field(default_factory=list)  # {"id", "text", "hash", "meta"} candidates, in order
    results: list[dict] = field(default_factory=list)


def _prepare(index: int, item: Any, settings: Any) -> _Item:
    """validate_input's checks and normalisation, and store_raw's memory candidates, for one item."""
    args = item_args(item)
    scope = item_scope(args)
    trace_id = args["trace_id"] or str(uuid.uuid4())
    metadata = check_metadata(args["metadata"])
    messages = normalize_messages(args["messages"])
    check_limits(messages, metadata, settings)
    max_input_chars, max_message_chars = settings.max_input_chars, settings.max_message_chars
    total = sum(len(m["content"]) for m in messages)
    if total > max_input_chars:
        raise InvalidInputError(f"Input of {total} characters exceeds the limit of {max_input_chars} characters "
                                "(MEMORYX_MAX_INPUT_CHARS); split it into several items.", trace_id=trace_id)
    prepared = _Item(index, trace_id, scope, messages, metadata)
    kept: list[dict] = []
    for m in messages:
        text = m["content"].strip()
        if not text:
            continue
        chunks = split_long(m["content"], max_message_chars) if len(m["content"]) > max_message_chars else [text]
        kept.extend({**m, "content": c} for c in chunks)
    for i, m in enumerate(x for x in kept if x["role"] != "system"):
        meta = {**metadata, "role": m["role"]}  # store_raw's metadata: the caller's plus role/name/timestamp
        for key in ("name", "timestamp"):
            if m.get(key):
                meta[key] = m[key]
        meta.update(speaker_meta(m))  # the speaker; in a group the memory is the participant's
        prepared.memories.append({"id": deterministic_id(trace_id, f"raw{i}"), "text": m["content"],
                                  "hash": memory_hash(m["content"]), "meta": meta,
                                  "scope": participant_scope(scope, m), "valid_at": event_time(m)})
    if not kept:
        prepared.raw = []  # empty input: nothing written, not even the raw input (as validate_input)
    return prepared


def _live_with_hashes(session, hashes: Sequence[str]) -> dict[str, list[dict]]:
    """Live memories whose hash is one of `hashes`: {hash: [{"id", user_id, agent_id, run_id}]}."""
    col = MemoryRow.__table__.c
    out: dict[str, list[dict]] = {}
    unique = list(dict.fromkeys(hashes))
    for i in range(0, len(unique), 500):
        stmt = (select(col.id, col.hash, col.user_id, col.agent_id, col.run_id, col.group_id)
                .where(col.hash.in_(unique[i:i + 500]), col.deleted_at.is_(None))
                .order_by(col.created_at, col.id))
        for row in session.execute(stmt):
            out.setdefault(row.hash, []).append({"id": row.id, "user_id": row.user_id, "agent_id": row.agent_id,
                                                 "run_id": row.run_id, "group_id": row.group_id})
    return out


def _select_new(items: list[_Item], known: dict[str, list[dict]]) -> list[tuple[_Item, dict]]:
    """store_raw's duplicate rule over the whole chunk, in item order: a message is skipped when a live
    memory of the item's scope has the same hash under another id (earlier items of the chunk included)."""
    chosen: list[tuple[_Item, dict]] = []
    known = {h: list(rows) for h, rows in known.items()}
    for it in items:
        for mem in it.memories:
            rows = known.setdefault(mem["hash"], [])
            if any(r["id"] != mem["id"] and mem["scope"].contains(r) for r in rows):
                continue
            if not any(r["id"] == mem["id"] for r in rows):
                rows.append({"id": mem["id"], **mem["scope"].as_dict()})
            chosen.append((it, mem))
    return chosen


def _record_intents(session, postgres: bool, ids: list[str]) -> None:
    """SQLStoreBase._record_intent's upsert (one queued job per target, a fresh job id on each new write) as
    ONE executemany: the per-target statements cost more than the memories' own inserts at chunk size."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return
    if postgres:  # each dialect loads when its store writes (a SQLite process never loads PostgreSQL's)
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    now = utc_now()
    stmt = insert(OutboxRow)
    stmt = stmt.on_conflict_do_update(index_elements=["kind", "target_id"],
                                      set_={"id": stmt.excluded.id, "error": "pending", "updated_at": now})
    session.execute(stmt, [{"id": new_id(), "kind": "memory", "target_id": t, "error": "pending", "attempts": 0,
                            "created_at": now, "updated_at": now} for t in ids])

@dataclass
class _Plan:
    """A chunk read and its embedding started: what `_write` needs once the previous chunk is written."""
    writing: list[_Item]
    hashes: list[str]
    vectors: Future          # {text: vector} of the texts the read found new


class RawIngest:
    """infer=False for many items: see the module docstring.

    With `overlap` (the default) chunk k+1 is read and embedded on a helper thread while chunk k's SQL
    transaction and vector upsert run: ONNX Runtime releases the GIL, so the writer's Python and SQLite time
    hides under the encoder's (bench/bench_bulk.py --overlap both measures it). The read that picks what to
    embed then runs before the previous chunk is committed; a duplicate it could not see yet is still caught
    by the same read under the scope locks (`_insert`), at the price of one wasted embedding.
    """

    overlap = True

    def __init__(self, services: Any, *, chunk_size: int):
        self.services = services
        self.chunk_size = max(1, int(chunk_size))

    def run(self, items: list, progress: Progress | None = None) -> list[dict]:
        results: list[dict | None] = [None] * len(items)
        with contextlib.ExitStack() as stack:
            pool = (stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="memoryx-bulk-embed"))
                    if self.overlap else None)
            pending: tuple[list[_Item], _Plan] | None = None
            for chunk in self._chunks(items, results, progress):
                started = (chunk, self._start(chunk, pool))
                if pending is not None:
                    self._flush(*pending, results, progress)
                pending = started
            if pending is not None:
                self._flush(*pending, results, progress)
        return [r for r in results if r is not None]

    def _chunks(self, items: list, results: list, progress: Progress | None) -> Iterator[list[_Item]]:
        """The prepared items in chunks of about `chunk_size` memories; an item that fails its checks gets its
        error result here and joins no chunk."""
        settings = self.services.settings
        chunk: list[_Item] = []
        size = 0
        for index, item in enumerate(items):
            try:
                prepared = _prepare(index, item, settings)
            except Exception as exc:  # this item's failure is its result
                results[index] = error_result(exc, item.get("trace_id") if isinstance(item, dict) else None)
                if progress:
                    progress(1)
                continue
            chunk.append(prepared)
            size += len(prepared.memories)
            if size >= self.chunk_size:
                yield chunk
                chunk, size = [], 0
        if chunk:
            yield chunk

    def _flush(self, chunk: list[_Item], plan: _Plan, results: list, progress: Progress | None) -> None:
        try:
            self._write(plan)
            for it in chunk:
                results[it.index] = {"results": it.results, "relations": no_relations(), "trace_id": it.trace_id}
        except Exception as exc:  # the chunk's transaction rolled back: none of its items was written
            log.warning("bulk chunk of %d items failed: %s", len(chunk), exc)
            for it in chunk:
                results[it.index] = error_result(exc, it.trace_id)
        if progress:
            progress(len(chunk))

    def _start(self, chunk: list[_Item], pool: ThreadPoolExecutor | None) -> _Plan:
        """Read which memories of `chunk` are new (outside the locks, so that a re-import embeds nothing it will
        skip) and start embedding them: on `pool` when given, else here. A failure is kept for `_write`."""
        writing = [it for it in chunk if it.raw]
        hashes = [m["hash"] for it in writing for m in it.memories]
        vectors: Future = Future()
        try:
            texts: list[str] = []
            if writing:
                with self.services.sql._tx() as s:
                    planned = _select_new(writing, _live_with_hashes(s, hashes))
                texts = list(dict.fromkeys(mem["text"] for _, mem in planned))
            if pool is not None and texts:
                return _Plan(writing, hashes, pool.submit(self._embed, texts))
            vectors.set_result(self._embed(texts))
        except Exception as exc:
            vectors.set_exception(exc)
        return _Plan(writing, hashes, vectors)

    def _embed(self, texts: list[str]) -> dict[str, list[float]]:
        return dict(zip(texts, self.services.embeddings.embed_documents(texts))) if texts else {}

    def _write(self, plan: _Plan) -> None:
        if not plan.writing:
            return
        vectors = plan.vectors.result()  # the embedding's error, if any, fails this chunk
        with self.services.sql.scope_locks([it.scope for it in plan.writing]):  # one PG connection, any users
            rows, jobs = self._insert(plan.writing, plan.hashes)
            self._project(rows, jobs, vectors)

    def _insert(self, writing: list[_Item], hashes: list[str]) -> tuple[list[dict], list[str]]:
        """One write transaction: raw inputs, memories, history rows and the projection intents."""
        sql = self.services.sql
        now = utc_now()
        with sql._tx(write=True) as s:
            planned = _select_new(writing, _live_with_hashes(s, hashes))  # again, under the locks
            ids = [mem["id"] for _, mem in planned]
            present = {r.id: r for r in s.scalars(select(MemoryRow).where(MemoryRow.id.in_(ids)))} if ids else {}
            traces = [it.trace_id for it in writing]
            saved = set(s.scalars(select(RawInputRow.trace_id).where(RawInputRow.trace_id.in_(traces))))
            s.add_all(RawInputRow(id=new_id(), trace_id=it.trace_id, **it.scope.as_dict(), messages=it.raw,
                                  meta=it.metadata, created_at=now) for it in writing if it.trace_id not in saved)
            ordered, new_rows, history = [], [], []
            for n, (it, mem) in enumerate(planned):
                row = present.get(mem["id"])
                if row is None:
                    # distinct, increasing times keep the messages' order (neighbouring turns in search)
                    created = now + timedelta(microseconds=n)
                    row = MemoryRow(id=mem["id"], text=mem["text"], hash=mem["hash"], **mem["scope"].as_dict(),
                                    category=None, importance=0.5, memory_type="episodic", meta=mem["meta"],
                                    created_at=created, updated_at=created, deleted_at=None, access_count=0,
                                    trace_id=it.trace_id, valid_at=mem["valid_at"])
                    new_rows.append(row)
                    history.append(HistoryRow(id=new_id(), memory_id=mem["id"], event="ADD", old_memory=None,
                                              new_memory=mem["text"], actor="memoryx", trace_id=it.trace_id,
                                              created_at=created))
                elif not mem["scope"].contains(memory_dict(row)):
                    raise InvalidInputError(f"Memory id {row.id} already exists in another scope (trace id "
                                            f"{it.trace_id} reused across scopes); use a new trace id.")
                ordered.append(row)
                it.results.append({"id": mem["id"], "memory": mem["text"], "event": "ADD"})
            s.add_all(new_rows)
            s.flush()  # history rows reference the memories
            s.add_all(history)
            # the projection intents, in this transaction (the transactional outbox); their job ids are read
            # here, before projecting, and only those are cleared afterwards (stores/sql/outbox.py)
            _record_intents(s, sql.is_postgres, ids)
            s.flush()
            jobs = list(s.scalars(select(OutboxRow.id).where(OutboxRow.kind == "memory",
                                                             OutboxRow.target_id.in_(ids)))) if ids else []
            return [memory_dict(r) for r in ordered], jobs

    def _project(self, rows: list[dict], jobs: list[str], vectors: dict[str, list[float]]) -> None:
        """One vector upsert for the chunk, then its jobs cleared (Projector.sync_memories' contract: a
        failure leaves them queued with the error for `retry_pending`)."""
        if not rows:
            return
        sql, ids = self.services.sql, [r["id"] for r in rows]
        try:
            missing = [r["memory"] for r in rows if r["memory"] not in vectors]
            if missing:  # a duplicate deleted between the read and the write: embed what it left to write
                vectors.update(zip(missing, self.services.embeddings.embed_documents(missing)))
            points = self.services.projector.memory_points(rows, {r["id"]: vectors[r["memory"]] for r in rows})
            for part in _multilingual_steps(points) if self.services.vectors.multilingual is not None else [points]:
                self.services.vectors.upsert_memories(part)
        except Exception as exc:
            log.warning("memory projection failed for %d rows, queued for retry: %s", len(ids), exc)
            sql.enqueue_projections(kind="memory", target_ids=ids, error=repr(exc))
            return
        sql.clear_projections(jobs)
        sql.refresh_statistics_if_grown()  # a bulk chunk can double the table: keep SQLite's plans right


def _multilingual_steps(points: list[dict]) -> list[list[dict]]:
    """A chunk's points in two upserts: first those written before their owner's first CJK memory of the chunk,
    then the rest. The multilingual index takes an owner from the first write holding such a memory
    (stores/vectors/multilingual.py); one upsert for the whole chunk would give the English said before it a
    multilingual vector, which one add at a time does not."""
    started: set = set()
    before, rest = [], []
    for p in points:
        owner = owner_scope(p)
        if owner not in started and mostly_cjk(p.get("text")):
            started.add(owner)
        (rest if owner in started else before).append(p)
    return [part for part in (before, rest) if part]


# --------------------------------------------------------------------------------------------------------
# infer=True: the add graph per item, scopes in parallel
# --------------------------------------------------------------------------------------------------------


def scope_groups(items: list, results: list) -> dict[str, list[tuple[int, dict]]]:
    """Items grouped by scope, in order; an item that cannot be read gets its error result at once."""
    groups: dict[str, list[tuple[int, dict]]] = {}
    for index, item in enumerate(items):
        try:
            args = item_args(item)
            key = item_scope(args).key()
        except Exception as exc:
            results[index] = error_result(exc)
            continue
        groups.setdefault(key, []).append((index, args))
    return groups


def run_inferred(items: list, add_one: Callable[[dict], dict], *, workers: int,
                 progress: Progress | None = None) -> list[dict]:
    """`add_one(args)` for each item: one scope's items in order, scopes in parallel on `workers` threads."""
    results: list[dict | None] = [None] * len(items)
    groups = scope_groups(items, results)
    if progress and len(items) - sum(map(len, groups.values())):
        progress(len(items) - sum(map(len, groups.values())))

    def run_group(group: list[tuple[int, dict]]) -> None:
        for index, args in group:
            try:
                results[index] = add_one(args)
            except Exception as exc:  # this item's failure is its result
                results[index] = error_result(exc, args.get("trace_id"))
            if progress:
                progress(1)

    if groups:
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(groups))),
                                thread_name_prefix="memoryx-bulk") as pool:
            for fut in [pool.submit(run_group, g) for g in groups.values()]:
                fut.result()
    return [r for r in results if r is not None]


async def run_inferred_async(items: list, add_one: Callable[[dict], Awaitable[dict]], *, workers: int,
                             progress: Progress | None = None) -> list[dict]:
    """`run_inferred` for AsyncMemory: one task per scope, at most `workers` scopes at once."""
    results: list[dict | None] = [None] * len(items)
    groups = scope_groups(items, results)
    if progress and len(items) - sum(map(len, groups.values())):
        progress(len(items) - sum(map(len, groups.values())))
    gate = asyncio.Semaphore(max(1, workers))

    async def run_group(group: list[tuple[int, dict]]) -> None:
        async with gate:
            for index, args in group:
                try:
                    results[index] = await add_one(args)
                except Exception as exc:  # this item's failure is its result
                    results[index] = error_result(exc, args.get("trace_id"))
                if progress:
                    progress(1)

    await asyncio.gather(*(run_group(g) for g in groups.values()))
    return [r for r in results if r is not None]

def summarize(results: list[dict]) -> dict:
    """Counts of a batch's outcome: items, failed items, and events (ADD/UPDATE/...)."""
    events: dict[str, int] = {}
    failed = 0
    for r in results:
        failed += "error" in r
        for mem in r.get("results") or []:
            events[mem.get("event", "?")] = events.get(mem.get("event", "?"), 0) + 1
    return {"items": len(results), "failed": failed, "events": events}


__all__ = ["ITEM_KEYS", "RawIngest", "check_items", "error_result", "item_args", "run_inferred",
           "run_inferred_async", "scope_groups", "summarize"]
