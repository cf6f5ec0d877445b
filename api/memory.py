"""The Python API: `Memory` and `AsyncMemory`, mem0-compatible in names and result shapes.

    from memoryx import Memory
    with Memory() as m:                       # embedded defaults under MEMORYX_DATA_DIR (.memoryx)
        m.add("I live in Berlin and I love sushi", user_id="alice")
        m.search("where does alice live?", user_id="alice")     # {"results": [...], "relations": [...]}

`add` and `search` run the LangGraph workflows (memoryx.graphs.add / memoryx.graphs.search) with the live
stores injected through `context=Context(services=...)`; the add graph is compiled with the configured
checkpointer and every run's thread id is its trace id, so a run interrupted for human review can be resumed
with `resume_add(trace_id, operations)`. The other methods go straight to the system of record (SQL) and
then bring the projections (vectors, graph) in step.

`AsyncMemory` (memoryx.api.async_memory) has the same methods as coroutines: graphs run with `ainvoke`, the
(synchronous) stores are called through `asyncio.to_thread`. What both share lives in memoryx.api.memory_core.
"""

from __future__ import annotations

import os
from typing import Any

from langgraph.types import Command

from memoryx.api.export_import import export_jsonl, import_records, parse
from memoryx.api.front import MemoryFront
from memoryx.api.inputs import check_id, optional_scope, scope_arg, scope_of_ids
from memoryx.api.mem0_config import settings_from_config
from memoryx.api.run_recovery import RESUME_RUN_NAME, recover_add_runs
from memoryx.core.scope import Scope
from memoryx.errors import NotFoundError
from memoryx.ingest import bulk
from memoryx.lifecycle.compensate import failed_add, failed_step
from memoryx.lifecycle.retention import abandon_run, forget_finished_run

__all__ = ["AsyncMemory", "Memory", "settings_from_config"]


class Memory(MemoryFront):
    """Long-term memory, mem0-compatible. See the module docstring.

    Args:
        settings: a `Settings`, a config dict (flat settings or mem0 style), or None for MEMORYX_* env.
        llm: a LangChain chat model used for every role (or per role: extraction_llm, judgment_llm, graph_llm).
        embeddings: a LangChain `Embeddings`.
        services: already built `memoryx.runtime.services.Services` to share (not closed by `close()`).
        **overrides: individual settings fields, e.g. `data_dir="/tmp/mx"`, `review=True`.
    """

    # --- graphs -------------------------------------------------------------------------------------

    def add(self, messages, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
            metadata: dict | None = None, infer: bool = True, trace_id: str | None = None,
            review: bool | None = None, expiration_date: str | None = None, immutable: bool = False,
            agent_memory: str | None = None, memory_type: str | None = None, prompt: str | None = None,
            update_prompt: str | None = None, includes: str | None = None, excludes: str | None = None,
            custom_instructions: str | None = None, custom_categories: dict | list | None = None,
            group_id: str | None = None, participants: dict[str, str] | None = None) -> dict:
        """Remember what matters in `messages` (a string or a list of {"role", "content"} dicts).

        Group chats: `group_id` names the group; each message may carry `name` (the speaker) and
        `user_id` (the participant's id). Facts go to the participant who stated them (scope user_id =
        the message's user_id, else the speaker's name, within the group; metadata.speaker = the name).
        `participants` {speaker name: user id} writes each speaker's user id in, so a chatbot asks about a
        participant by their own user id: add(chat, group_id="book-club", participants={"Caroline": "u-17"}),
        then search("where do I live?", user_id="u-17", group_id="book-club").

        mem0's options: `expiration_date` "YYYY-MM-DD" (UTC, inclusive; search and get_all stop returning the
        memories after it, get still does) and `immutable=True` (the judge never updates or deletes them).

        `agent_memory`: where the assistant's own memories learned here go: "tenant" (default,
        MEMORYX_AGENT_MEMORY) keeps them in this user's tenancy (user_id + agent_id), "global" with the agent
        alone, shared by every user of the agent.

        Custom instructions (defaults from settings): `prompt` (the extraction prompt; with
        memory_type="procedural_memory" the summary's prompt, as in mem0), `update_prompt` (the judge's),
        `includes`, `excludes` (asked of the model AND enforced by a keyword rule: memoryx.ingest.instructions),
        `custom_instructions`, `custom_categories` {name: description} (stored as metadata.categories).
        `memory_type="procedural_memory"` with an agent_id stores one step-by-step summary of the agent run.
        Image parts are read by settings.vision_llm when set; otherwise the result's "warnings" say so.

        Returns `{"results": [{"id", "memory", "event", "previous_memory"?}], "relations": {...}, "trace_id"}`.
        With review on (settings.review or review=True) nothing is written yet: the result has
        `"status": "awaiting_review"` and `"pending_operations"`; approve or edit them with `resume_add`.
        """
        core = self._core
        messages, metadata, infer, instructions, warnings = core.prepare_add(
            messages, metadata, infer, agent_id=agent_id, memory_type=memory_type, prompt=prompt,
            update_prompt=update_prompt, includes=includes, excludes=excludes,
            custom_instructions=custom_instructions, categories=custom_categories)
        inp, config = core.add_input(messages, user_id, agent_id, run_id, metadata, infer, trace_id,
                                     expiration_date=expiration_date, immutable=immutable,
                                     agent_memory=agent_memory, instructions=instructions, group_id=group_id,
                                     participants=participants)
        graph = core.add_graph()
        core.check_review(graph, review)
        replay = core.finished_before(inp["trace_id"], trace_id)
        with core.running(inp["trace_id"]):
            try:
                out = graph.invoke(inp, config, context=core.context(review=review))
            except BaseException as exc:
                # the caller is told this add failed: what it wrote is undone and its checkpoints go, so that
                # no later start resumes (applies) it (memoryx.lifecycle.compensate)
                snapshot = self._snapshot(graph, config)
                report = abandon_run(core.services, graph.checkpointer, inp["trace_id"], f"the add failed: {exc!r}",
                                     values=getattr(snapshot, "values", None), undo=not replay)
                raise failed_add(exc, inp["trace_id"], failed_step(snapshot), report)
        result = core.finish_add(out, inp["trace_id"], lambda: self._snapshot(graph, config))
        forget_finished_run(core.services, graph.checkpointer, inp["trace_id"], result)
        return {**result, "warnings": warnings} if warnings else result

    def add_many(self, items: list[dict], *, infer: bool = True, progress=None) -> list[dict]:
        """Many adds at once (memoryx.ingest.bulk). Each item is a dict of add()'s arguments: messages, user_id,
        agent_id, run_id, metadata (and optionally trace_id). Returns one add()-shaped result per item, in
        order; an item that fails gets `{"results": [], "error": {"type", "message"}, ...}` instead.

        infer=False stores the messages verbatim, batched (one embedding call, SQL transaction and vector
        upsert per MEMORYX_BULK_CHUNK_SIZE messages); infer=True runs the add graph per item, one scope's items
        in order and MEMORYX_BULK_WORKERS scopes in parallel. `progress(n)` is called as items finish.
        """

        items = bulk.check_items(items)
        if not infer:
            return bulk.RawIngest(self.services, chunk_size=self.settings.bulk_chunk_size).run(items, progress)
        return bulk.run_inferred(items, lambda args: self.add(**args, infer=True),
                                 workers=self.settings.bulk_workers, progress=progress)

    def resume_add(self, trace_id: str, operations: list[dict] | None = None) -> dict:
        """Continue an add run paused for review. `operations`: the approved (possibly edited) list; None
        approves the pending ones as they are, [] rejects them all."""

        core = self._core
        graph = core.add_graph()
        config = core.run_config(check_id(trace_id, "trace_id"), RESUME_RUN_NAME)
        snapshot = self._snapshot(graph, config)
        if snapshot is None or not snapshot.next:
            raise NotFoundError(f"No add run awaiting review with trace_id {trace_id!r}.")
        resume = {"operations": operations} if operations is not None else {"approved": True}
        with core.running(trace_id):
            try:
                out = graph.invoke(Command(resume=resume), config, context=core.context())
            except BaseException as exc:  # told it failed: undone, never resumed by a later start (as add)
                snapshot = self._snapshot(graph, config)
                report = abandon_run(core.services, graph.checkpointer, trace_id, f"the resumed add failed: {exc!r}",
                                     values=getattr(snapshot, "values", None))
                raise failed_add(exc, trace_id, failed_step(snapshot), report)
        result = core.finish_add(out, trace_id, lambda: self._snapshot(graph, config))
        forget_finished_run(core.services, graph.checkpointer, trace_id, result)
        return result

    @staticmethod
    def _snapshot(graph, config):
        try:
            return graph.get_state(config)
        except ValueError:  # no checkpointer
            return None

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int = 10, filters: dict | None = None,
               threshold: float | None = None, mode: str | None = None, expand_depth: int | None = None,
               relation_types: list[str] | None = None, include_invalid: bool | None = None,
               include_archived: bool | None = None, group_id: str | None = None,
               speaker: str | None = None, time_range: Any = None,
               query_time_filter: str | None = None, now: Any = None, as_of: Any = None,
               memory_types: list[str] | None = None) -> dict:
        """Memories relevant to `query`, best first: `{"results": [{"id", "memory", "score", ...}], "relations": [...]}`.

        `mode`: keyword | vector | hybrid | fast | deep | auto; `threshold`: minimum score; `time_range`: only
        memories whose event happened in [start, end) ((start, end) ISO / datetime / epoch, either end None,
        or a period in words: "last summer", "上个月"); `query_time_filter`: auto | strict | off — what a period the
        query itself names does (default MEMORYX_QUERY_TIME_FILTER; the result's `time_filter` says what was applied).
        `now`: the time the question is asked at (datetime, ISO-8601 or epoch seconds; default the clock):
        "last week", "currently" and recency are read from it. `as_of`: the same, and memories whose event
        happened after it are left out (the memory as it stood then). `memory_types`: only memories of these
        types (e.g. ["semantic"], ["episodic"])."""
        core = self._core
        inp = core.search_input(query, user_id, agent_id, run_id, limit, filters, threshold,
                                {"mode": mode, "expand_depth": expand_depth, "relation_types": relation_types,
                                 "include_invalid": include_invalid, "include_archived": include_archived,
                                 "group_id": group_id, "speaker": speaker, "time_range": time_range,
                                 "query_time_filter": query_time_filter, "now": now, "as_of": as_of,
                                 "memory_types": memory_types})
        return core.search_result(inp)  # feedback penalty: in the search steps

    def get_context(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                    run_id: str | None = None, max_tokens: int = 1000, limit: int = 20,
                    group_id: str | None = None) -> dict:
        """A prompt-ready block of the memories relevant to `query`, within `max_tokens`."""
        found = self.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit, group_id=group_id)
        return self._core.get_context(query, user_id, agent_id, run_id, max_tokens, limit, found, group_id)

    def get_profile(self, *, user_id: str | None = None, group_id: str | None = None,
                    include_history: bool = False, agent_id: str | None = None) -> dict:
        """The profile the add graph keeps: for a user, name / aliases / home / work / relationships /
        preferences / dislikes / goals; for a group (group_id alone), members / roles / topics. Each value is
        {"value", "memory_ids", "since", "changed_at"}; include_history adds the values that ended. With
        agent_id, only the values said to that agent (a memory of the user with that agent backs them)."""
        return self._core.get_profile(user_id, group_id, include_history, agent_id)

    # --- records ------------------------------------------------------------------------------------

    def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, group_id: str | None = None) -> dict:
        """One memory by id. With a scope, a memory outside it is reported as not found."""
        return self._core.get(memory_id, optional_scope(user_id, agent_id, run_id, group_id))

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                limit: int = 100, filters: dict | None = None, group_id: str | None = None,
                include_archived: bool = False) -> dict:
        """`{"results": [...]}`: the scope's memories, newest first (merged and archived ones with
        include_archived=True)."""
        return self._core.get_all(user_id, agent_id, run_id, limit, filters, group_id, include_archived)

    def update(self, memory_id: str, text: str, metadata: dict | None = None) -> dict:
        """Replace a memory's text (and metadata). Its relations are extracted again from the new text:
        those it no longer yields are invalidated, new ones added (as an UPDATE in the add graph does)."""
        return self._core.update(memory_id, text, metadata)

    def delete(self, memory_id: str, *, reason: str | None = None) -> dict:
        """Soft-delete a memory (restorable with `rollback(trace_id)`); a `reason` is kept in the judgment log."""
        return self._core.delete(memory_id, reason=reason)

    def classify(self, memory_id: str, *, memory_type: str | None = None, importance: float | None = None) -> dict:
        """Set a memory's type (episodic, semantic, preference, fact) and/or importance (0..1) as you judge them."""
        return self._core.classify(memory_id, memory_type, importance)

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                   group_id: str | None = None) -> dict:
        return self._core.delete_all(user_id, agent_id, run_id, group_id=group_id)

    def rollback(self, trace_id: str, *, force: bool = False) -> dict:
        """Undo every operation of the run `trace_id` (memoryx.lifecycle.rollback): old texts back, deleted memories back,
        added ones soft-deleted, its relations undone; recorded as a new trace with ROLLBACK history events.
        Raises RollbackConflictError naming a later run that changed the same memories, unless `force`
        (then the later runs are rolled back first, newest first)."""
        return self._core.rollback(trace_id, force)

    def consolidate(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                    now=None, dry_run: bool = False, group_id: str | None = None) -> dict:
        """One consolidation pass over the scope (memoryx.graphs.consolidate): duplicates merged, clusters
        summarised, faded memories archived, staged ones made active; never beside an add of the same user.
        `now` (epoch s / ISO / datetime) is when the forgetting curve is read; `dry_run` writes nothing.
        Returns the report {"merged", "compressed", "archived", "model_calls", "trace_id", ...}."""

        from memoryx.api.consolidation import consolidate  # the consolidate graph loads only when used

        return consolidate(self._core, user_id, agent_id, run_id, now, dry_run, group_id=group_id)

    def end_run(self, run_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                group_id: str | None = None) -> dict:
        """Close a run (memory layers): its working memories that mattered stay as short-term, the
        rest are archived (restorable). Returns {"trace_id", "run_id", "kept", "archived"}."""

        from memoryx.api.consolidation import end_run

        return end_run(self._core, run_id, user_id, agent_id, group_id)

    def working_memory(self, run_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                       group_id: str | None = None) -> dict:
        """The open run's working memory: {"run_id", "turns": its last MEMORYX_WORKING_MEMORY_TURNS messages,
        oldest first, "memories": what the run wrote that is still working}; empty once end_run ran."""
        return self._core.working_memory(run_id, user_id, agent_id, group_id)

    def restore(self, memory_id: str) -> dict:
        """Bring an archived (or merged, or summarized) memory back to active."""

        from memoryx.api.consolidation import restore

        return restore(self._core, memory_id)

    def on(self, event: str, fn):
        """Call `fn(payload)` after each memory event (memoryx.core.events: "memory.added", "memory.updated",
        "memory.deleted", "memory.archived", "memory.merged", "memory.rolled_back", or "*"). Returns a
        handle: call it to unsubscribe. A subscriber that raises is logged, never breaks the write."""
        return self._core.on(event, fn)

    def explain(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None, group_id: str | None = None) -> dict:
        """Why this memory is remembered (memoryx.lifecycle.explain): its source messages, each judgment that
        touched it (trace id, event, reason), importance with its four factors, confidence, layer, strength
        and retention, links and history. With a scope, a memory outside it is reported as not found."""
        return self._core.explain(memory_id, optional_scope(user_id, agent_id, run_id, group_id))

    def history(self, memory_id: str) -> list[dict]:
        """Events of one memory, oldest first: {"event", "old_memory", "new_memory", "trace_id", "created_at", ...}."""
        return self._core.history(memory_id)

    def reset(self) -> None:
        """Delete every memory, entity, relation, judgment and history row of every scope."""
        self._core.reset()

    def purge(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
              compact: bool = True, group_id: str | None = None) -> dict:
        """Remove every trace of a scope: memories, history, raw inputs, judgments, entities, relations,
        vectors, graph and the add runs' checkpoints, then compact the files that keep deleted bytes.
        Covers every row whose scope lies within the given one (user_id="alice": alice's rows of every
        agent and run). Returns what was removed, per store (see memoryx.lifecycle.purge.purge_scope)."""
        return self._core.purge(user_id, agent_id, run_id, compact=compact, group_id=group_id)

    def prune(self) -> dict:
        """Delete raw inputs, judgments and checkpoints past their retention (MEMORYX_RETENTION_*_DAYS)."""
        return self._core.prune()

    def resume_unfinished_runs(self) -> dict:
        """Resume the add runs cut short (as when the stores open), leaving alone those another worker is
        running: `memoryx serve` calls it periodically on PostgreSQL, so a dead worker's runs finish elsewhere."""
        return recover_add_runs(self._core)

    # --- export / import (memoryx.api.export_import) -----------------------------------------------------

    def export(self, path: str | None = None, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None) -> str | int:
        """A scope's memories (with history) and graph as JSONL: the text, or the number of records written
        to `path`."""

        lines = export_jsonl(self.services, scope_of_ids(user_id, agent_id, run_id))
        if path is None:
            return "".join(lines)
        n = 0
        with open(path, "w", encoding="utf-8") as f:
            for n, line in enumerate(lines, 1):
                f.write(line)
        return n

    def import_memories(self, source: str, *, user_id: str | None = None, agent_id: str | None = None,
                        run_id: str | None = None) -> dict:
        """Read a MemoryX export (JSONL) or a mem0 export (JSON list) — a path or the text itself — into these
        stores, ids kept; a scope given here replaces the records' own. Returns the counts written."""


        text = open(source, encoding="utf-8").read() if os.path.exists(source) else source
        return import_records(self.services, parse(text), scope=optional_scope(user_id, agent_id, run_id))

    # --- judgments ----------------------------------------------------------------------------------

    def feedback(self, memory_id: str, feedback: str | None = None, reason: str | None = None, *,
                 feedback_reason: str | None = None) -> dict:
        """Feedback on a memory or a search result: "POSITIVE", "NEGATIVE", "VERY_NEGATIVE" (None withdraws
        it) and a reason (mem0's name `feedback_reason` too). Counted in judgment_stats()["feedback"]; a
        VERY_NEGATIVE memory is demoted in search (memoryx.lifecycle.feedback)."""
        return self._core.feedback(memory_id, feedback, reason if reason is not None else feedback_reason)

    def judgments(self, trace_id: str) -> dict:
        return self._core.judgment(trace_id)

    def list_judgments(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                       limit: int = 50, offset: int = 0) -> list[dict]:
        return self._core.list_judgments(user_id, agent_id, run_id, limit, offset)

    def verify(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        return self._core.verify(trace_id, result, notes)

    def judgment_stats(self, *, user_id: str | None = None, agent_id: str | None = None,
                       run_id: str | None = None) -> dict:
        return self._core.judgment_stats(user_id, agent_id, run_id)

    def audit(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
              since: Any = None, kinds: list[str] | str | None = None, store: bool = True,
              group_id: str | None = None) -> dict:
        """Scan the judgment log for what a human should look at (memoryx.lifecycle.audit): `kinds` any of
        add_then_delete, churn, parsed_vs_executed, slow, failed, unverified (default all); `since` an ISO time
        or a span ("24h", "7d"; default MEMORYX_AUDIT_LOOKBACK_HOURS). Returns {"findings": [{"id", "kind",
        "severity", "trace_ids", "memory_id", "detail", "event_at", "found_at", "new"}], "stored", "scanned"};
        with `store` (default) new findings are kept, each once (list them with `findings`)."""
        return self._core.audit(user_id, agent_id, run_id, since, kinds, store, group_id)

    def findings(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                 kinds: list[str] | str | None = None, since: Any = None, dismissed: bool | None = False,
                 limit: int = 100, offset: int = 0, group_id: str | None = None) -> list[dict]:
        """Stored findings, newest first (`dismissed`: False open ones, True dismissed ones, None both)."""
        return self._core.findings(user_id, agent_id, run_id, kinds, since, dismissed, limit, offset, group_id)

    def finding(self, finding_id: str) -> dict:
        """One stored finding by id."""
        return self._core.finding(finding_id)

    def settle_finding(self, finding_id: str, *, dismiss: bool = False, reason: str | None = None,
                       verification_trace_id: str | None = None) -> dict:
        """Dismiss a finding (with a reason) and/or link it to the verified run that settles it."""
        return self._core.settle_finding(finding_id, dismiss, reason, verification_trace_id)

    def verify_many(self, trace_ids: list[str], result: str, notes: str | None = None, *, allowed=None) -> dict:
        """Verify several runs with one verdict, each on its own: {"results": [{"trace_id", "status":
        "verified" | "not_found" | "not_yours"}], "verified": n}. `allowed(record) -> bool` limits it to the
        records a caller may touch (the server passes its key's check)."""
        return self._core.verify_many(trace_ids, result, notes, allowed)

    def judgment_report(self, *, days: int = 30, user_id: str | None = None, agent_id: str | None = None,
                        run_id: str | None = None, group_id: str | None = None) -> dict:
        """The daily accuracy report of the last `days` UTC days (memoryx.lifecycle.daily), oldest first."""
        return self._core.daily_report(user_id, agent_id, run_id, days, group_id)

    def reindex(self, scope: Scope | dict | None = None, *, user_id: str | None = None,
                agent_id: str | None = None, run_id: str | None = None) -> dict:
        """Rebuild the vector and graph projections of a scope (all scopes when None) from SQL."""
        return self._core.reindex(scope_arg(scope, user_id, agent_id, run_id))

    # --- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the stores; stops the embedded graph server this instance started."""
        self._core.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def __getattr__(name: str):
    # AsyncMemory (and the consolidate graph it imports) loads when asked for: a command that only adds
    # does not pay for it
    if name == "AsyncMemory":
        from memoryx.api.async_memory import AsyncMemory

        return AsyncMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
