"""`AsyncMemory`: the Python API for asyncio, same methods and result shapes as `memoryx.Memory`.

Graphs run natively with `ainvoke` (the add graph with an async checkpointer on the same database or file as
Memory's, so a run paused by one front end can be resumed by the other); the synchronous stores are called
through `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from langgraph.types import Command

from memoryx.api.consolidation import consolidate, end_run, restore
from memoryx.api.front import MemoryFront
from memoryx.api.inputs import check_id, optional_scope, scope_arg
from memoryx.api.run_recovery import RESUME_RUN_NAME
from memoryx.api.searching import empty_result
from memoryx.core.scope import Scope
from memoryx.errors import NotFoundError
from memoryx.graphs.add import compile_add_graph
from memoryx.ingest import bulk
from memoryx.lifecycle.compensate import failed_add, failed_step
from memoryx.lifecycle.retention import aabandon_run, aforget_finished_run
from memoryx.runtime.checkpointing import make_async_checkpointer
from memoryx.settings import Settings

__all__ = ["AsyncMemory"]


class AsyncMemory(MemoryFront):
    """`Memory` for asyncio. Graphs run natively with `ainvoke`; store calls run in worker threads.

    Construct it directly (the stores open synchronously, once) or with `await AsyncMemory.create(...)`
    to keep the event loop free while the embedded stores start.
    """

    def __init__(self, settings: Settings | dict | None = None, **kwargs: Any):
        super().__init__(settings, **kwargs)
        self._agraph = None
        self._asaver = None
        self._asaver_close = None
        self._alock: asyncio.Lock | None = None

    @classmethod
    async def create(cls, settings: Settings | dict | None = None, **kwargs: Any) -> "AsyncMemory":
        return await asyncio.to_thread(cls, settings, **kwargs)

    async def _add_graph(self):
        """The add graph compiled with an async checkpointer when one is configured."""
        if self._alock is None:
            self._alock = asyncio.Lock()
        async with self._alock:
            if self._agraph is None:
                self._agraph = await self._compile_async()
        return self._agraph

    async def _compile_async(self):
        self._asaver, self._asaver_close = await make_async_checkpointer(self._core.settings)
        return compile_add_graph(self._asaver)

    # --- graphs -------------------------------------------------------------------------------------

    async def add(self, messages, *, user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None, metadata: dict | None = None, infer: bool = True,
                  trace_id: str | None = None, review: bool | None = None, expiration_date: str | None = None,
                  immutable: bool = False, agent_memory: str | None = None, memory_type: str | None = None,
                  prompt: str | None = None, update_prompt: str | None = None, includes: str | None = None,
                  excludes: str | None = None, custom_instructions: str | None = None,
                  custom_categories: dict | list | None = None, group_id: str | None = None,
                  participants: dict[str, str] | None = None) -> dict:
        core = self._core
        # image descriptions and a procedural summary are model calls: off the event loop
        messages, metadata, infer, instructions, warnings = await asyncio.to_thread(
            core.prepare_add, messages, metadata, infer, agent_id=agent_id, memory_type=memory_type, prompt=prompt,
            update_prompt=update_prompt, includes=includes, excludes=excludes,
            custom_instructions=custom_instructions, categories=custom_categories)
        inp, config = core.add_input(messages, user_id, agent_id, run_id, metadata, infer, trace_id,
                                     expiration_date=expiration_date, immutable=immutable,
                                     agent_memory=agent_memory, instructions=instructions, group_id=group_id,
                                     participants=participants)
        graph = await self._add_graph()
        core.check_review(graph, review)
        replay = await asyncio.to_thread(core.finished_before, inp["trace_id"], trace_id)
        with core.running(inp["trace_id"]):
            try:
                out = await graph.ainvoke(inp, config, context=core.context(review=review))
            except BaseException as exc:
                # the caller is told this add failed: what it wrote is undone and its checkpoints go, so that
                # no later start resumes (applies) it (memoryx.lifecycle.compensate)
                snapshot = await self._snapshot(graph, config)
                report = await aabandon_run(core.services, graph.checkpointer, inp["trace_id"],
                                            f"the add failed: {exc!r}", values=getattr(snapshot, "values", None),
                                            undo=not replay)
                raise failed_add(exc, inp["trace_id"], failed_step(snapshot), report)
        snapshot = await self._snapshot(graph, config)
        result = core.finish_add(out, inp["trace_id"], lambda: snapshot)
        await aforget_finished_run(core.services, graph.checkpointer, inp["trace_id"], result)
        return {**result, "warnings": warnings} if warnings else result

    async def add_many(self, items: list[dict], *, infer: bool = True, progress=None) -> list[dict]:
        """`Memory.add_many` for asyncio: infer=False runs the batched writer in a worker thread; infer=True
        awaits add() per item, one scope's items in order, MEMORYX_BULK_WORKERS scopes at once."""

        items = bulk.check_items(items)
        if not infer:
            ingest = bulk.RawIngest(self.services, chunk_size=self.settings.bulk_chunk_size)
            return await asyncio.to_thread(ingest.run, items, progress)
        return await bulk.run_inferred_async(items, lambda args: self.add(**args, infer=True),
                                             workers=self.settings.bulk_workers, progress=progress)

    async def resume_add(self, trace_id: str, operations: list[dict] | None = None) -> dict:
        core = self._core
        graph = await self._add_graph()
        config = core.run_config(check_id(trace_id, "trace_id"), RESUME_RUN_NAME)
        snapshot = await self._snapshot(graph, config)
        if snapshot is None or not snapshot.next:
            raise NotFoundError(f"No add run awaiting review with trace_id {trace_id!r}.")
        resume = {"operations": operations} if operations is not None else {"approved": True}
        with core.running(trace_id):
            try:
                out = await graph.ainvoke(Command(resume=resume), config, context=core.context())
            except BaseException as exc:  # told it failed: undone, never resumed by a later start (as add)
                snapshot = await self._snapshot(graph, config)
                report = await aabandon_run(core.services, graph.checkpointer, trace_id,
                                            f"the resumed add failed: {exc!r}", values=getattr(snapshot, "values", None))
                raise failed_add(exc, trace_id, failed_step(snapshot), report)
        snapshot = await self._snapshot(graph, config)
        result = core.finish_add(out, trace_id, lambda: snapshot)
        await aforget_finished_run(core.services, graph.checkpointer, trace_id, result)
        return result

    @staticmethod
    async def _snapshot(graph, config):
        try:
            return await graph.aget_state(config)
        except (ValueError, NotImplementedError):
            try:
                return await asyncio.to_thread(graph.get_state, config)
            except ValueError:
                return None

    async def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                     run_id: str | None = None, limit: int = 10, filters: dict | None = None,
                     threshold: float | None = None, mode: str | None = None, expand_depth: int | None = None,
                     relation_types: list[str] | None = None, include_invalid: bool | None = None,
                     include_archived: bool | None = None, group_id: str | None = None,
                     speaker: str | None = None, time_range: Any = None,
                     query_time_filter: str | None = None, now: Any = None, as_of: Any = None,
                     memory_types: list[str] | None = None) -> dict:
        core = self._core
        inp = core.search_input(query, user_id, agent_id, run_id, limit, filters, threshold,
                                {"mode": mode, "expand_depth": expand_depth, "relation_types": relation_types,
                                 "include_invalid": include_invalid, "include_archived": include_archived,
                                 "group_id": group_id, "speaker": speaker, "time_range": time_range,
                                 "query_time_filter": query_time_filter, "now": now, "as_of": as_of,
                                 "memory_types": memory_types})
        if not core.search_traced():
            return await asyncio.to_thread(core.search_result, inp)  # the steps are synchronous store reads
        out = await core.search_graph().ainvoke(inp, core.search_config(), context=core.context())
        return core.searched(inp, dict(out.get("result") or empty_result()))

    async def get_context(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                          run_id: str | None = None, max_tokens: int = 1000, limit: int = 20,
                          group_id: str | None = None) -> dict:
        found = await self.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit,
                                  group_id=group_id)
        return await asyncio.to_thread(self._core.get_context, query, user_id, agent_id, run_id, max_tokens,
                                       limit, found, group_id)

    async def get_profile(self, *, user_id: str | None = None, group_id: str | None = None,
                          include_history: bool = False, agent_id: str | None = None) -> dict:
        """See Memory.get_profile."""
        return await asyncio.to_thread(self._core.get_profile, user_id, group_id, include_history, agent_id)

    # --- records ------------------------------------------------------------------------------------

    async def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None, group_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.get, memory_id, optional_scope(user_id, agent_id, run_id, group_id))

    async def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      limit: int = 100, filters: dict | None = None, group_id: str | None = None,
                      include_archived: bool = False) -> dict:
        return await asyncio.to_thread(self._core.get_all, user_id, agent_id, run_id, limit, filters, group_id,
                                       include_archived)

    async def update(self, memory_id: str, text: str, metadata: dict | None = None) -> dict:
        return await asyncio.to_thread(self._core.update, memory_id, text, metadata)

    async def delete(self, memory_id: str, *, reason: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.delete, memory_id, reason=reason)

    async def classify(self, memory_id: str, *, memory_type: str | None = None, importance: float | None = None) -> dict:
        return await asyncio.to_thread(self._core.classify, memory_id, memory_type, importance)

    async def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None,
                         run_id: str | None = None, group_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.delete_all, user_id, agent_id, run_id, "api", group_id)

    async def rollback(self, trace_id: str, *, force: bool = False) -> dict:
        """`Memory.rollback` (runs in a worker thread)."""
        return await asyncio.to_thread(self._core.rollback, trace_id, force)

    async def consolidate(self, *, user_id: str | None = None, agent_id: str | None = None,
                          run_id: str | None = None, now=None, dry_run: bool = False,
                          group_id: str | None = None) -> dict:
        """See Memory.consolidate."""

        return await asyncio.to_thread(lambda: consolidate(self._core, user_id, agent_id, run_id, now, dry_run,
                                                           group_id=group_id))

    async def end_run(self, run_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                      group_id: str | None = None) -> dict:
        """See Memory.end_run."""

        return await asyncio.to_thread(end_run, self._core, run_id, user_id, agent_id, group_id)

    async def working_memory(self, run_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                             group_id: str | None = None) -> dict:
        """See Memory.working_memory."""

        return await asyncio.to_thread(self._core.working_memory, run_id, user_id, agent_id, group_id)

    async def restore(self, memory_id: str) -> dict:
        """See Memory.restore."""

        return await asyncio.to_thread(restore, self._core, memory_id)

    def on(self, event: str, fn):
        """`Memory.on`: subscribers are plain callables, called in the writing thread."""
        return self._core.on(event, fn)

    async def explain(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                      run_id: str | None = None, group_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.explain, memory_id, optional_scope(user_id, agent_id, run_id, group_id))

    async def history(self, memory_id: str) -> list[dict]:
        return await asyncio.to_thread(self._core.history, memory_id)

    async def reset(self) -> None:
        await asyncio.to_thread(self._core.reset)

    async def purge(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                    compact: bool = True, group_id: str | None = None) -> dict:
        """`Memory.purge`: every trace of the scope, from every store (runs in a worker thread)."""
        return await asyncio.to_thread(lambda: self._core.purge(user_id, agent_id, run_id, compact=compact,
                                                                savers=(self._asaver,), group_id=group_id))

    async def prune(self) -> dict:
        """`Memory.prune`: retention of raw inputs, judgments and checkpoints."""
        return await asyncio.to_thread(self._core.prune, (self._asaver,))

    async def feedback(self, memory_id: str, feedback: str | None = None, reason: str | None = None, *,
                       feedback_reason: str | None = None) -> dict:
        """`Memory.feedback` for asyncio."""
        return await asyncio.to_thread(self._core.feedback, memory_id, feedback,
                                       reason if reason is not None else feedback_reason)

    async def judgments(self, trace_id: str) -> dict:
        return await asyncio.to_thread(self._core.judgment, trace_id)

    async def list_judgments(self, *, user_id: str | None = None, agent_id: str | None = None,
                             run_id: str | None = None, limit: int = 50, offset: int = 0) -> list[dict]:
        return await asyncio.to_thread(self._core.list_judgments, user_id, agent_id, run_id, limit, offset)

    async def verify(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.verify, trace_id, result, notes)

    async def judgment_stats(self, *, user_id: str | None = None, agent_id: str | None = None,
                             run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.judgment_stats, user_id, agent_id, run_id)

    async def audit(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                    since: Any = None, kinds: list[str] | str | None = None, store: bool = True,
                    group_id: str | None = None) -> dict:
        """See Memory.audit."""
        return await asyncio.to_thread(self._core.audit, user_id, agent_id, run_id, since, kinds, store, group_id)

    async def findings(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                       kinds: list[str] | str | None = None, since: Any = None, dismissed: bool | None = False,
                       limit: int = 100, offset: int = 0, group_id: str | None = None) -> list[dict]:
        return await asyncio.to_thread(self._core.findings, user_id, agent_id, run_id, kinds, since, dismissed,
                                       limit, offset, group_id)

    async def finding(self, finding_id: str) -> dict:
        return await asyncio.to_thread(self._core.finding, finding_id)

    async def settle_finding(self, finding_id: str, *, dismiss: bool = False, reason: str | None = None,
                             verification_trace_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.settle_finding, finding_id, dismiss, reason, verification_trace_id)

    async def verify_many(self, trace_ids: list[str], result: str, notes: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.verify_many, trace_ids, result, notes)

    async def judgment_report(self, *, days: int = 30, user_id: str | None = None, agent_id: str | None = None,
                              run_id: str | None = None, group_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.daily_report, user_id, agent_id, run_id, days, group_id)

    async def reindex(self, scope: Scope | dict | None = None, *, user_id: str | None = None,
                      agent_id: str | None = None, run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.reindex, scope_arg(scope, user_id, agent_id, run_id))

    # --- lifecycle ----------------------------------------------------------------------------------

    async def close(self) -> None:
        closer, self._asaver_close, self._asaver = self._asaver_close, None, None
        if closer is not None:
            with contextlib.suppress(Exception):
                res = closer()
                if asyncio.iscoroutine(res):
                    await res
        await asyncio.to_thread(self._core.close)

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
