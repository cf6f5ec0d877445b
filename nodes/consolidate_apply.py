"""consolidate_apply: write the pass's decisions under the scope lock (the one execute_ops takes, so a pass
never runs beside an add of the same owner), project them, log the judgment and build the report.

SQL first, in one transaction (SQLStore.apply_consolidation): memories changed since the load step are left
alone (`skipped`). The judgment record (operation_type CONSOLIDATE, in the same judgment log as add runs)
holds every merge, compression and archive decision with its inputs and reason, the model's raw answers
and what was executed. The events (memory.merged / archived / ...) are published by the SQL store with
each history row (memoryx.core.events). A dry run decides and reports but writes nothing, not even the judgment.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.core.scope import Scope
from memoryx.lifecycle.contradictions import CONTRADICTS
from memoryx.lifecycle.sessions import IDLE, end_mark_id, mark_ended, publish_end
from memoryx.lifecycle.state import ConsolidateState, vector_cache
from memoryx.models.factory import model_name_of
from memoryx.nodes.consolidate_load import scope_of
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def iso_time(ts) -> str:
    """A pass's clock (epoch seconds) as the UTC time people read on the review page."""
    if ts is None:
        return "now"
    return datetime.fromtimestamp(float(ts), timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

OPERATION_TYPE = "CONSOLIDATE"


def end_idle_runs(sql, scope, runs: list[dict], trace_id: str, skipped: set[str]) -> list[str]:
    """The idle runs this pass closed end: each gets its end mark and one session.end (memoryx.lifecycle.sessions)."""
    ended = []
    for run in runs:
        kept = [i for i in run["kept"] if i not in skipped]
        archived = [i for i in run["archived"] if i not in skipped]
        if not kept and not archived:
            continue  # changed by an add since the load: the run is alive, a later pass decides
        run_scope = Scope(user_id=scope.user_id, agent_id=scope.agent_id, run_id=run["run_id"], group_id=scope.group_id)
        mark_ended(sql, run_scope, end_mark_id(trace_id, run["run_id"]))
        publish_end(sql, run_scope, trace_id=trace_id, reason=IDLE, kept=kept, archived=archived)
        ended.append(run["run_id"])
    return ended


def consolidate_apply(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    scope = scope_of(state)
    trace_id = state["trace_id"]
    mems = state.get("memories") or []
    merges, summaries, archives = state.get("merges") or [], state.get("summaries") or [], state.get("archives") or []
    promotions, entity_merges, links = state.get("promotions") or [], state.get("entity_merges") or [], state.get("links") or []
    contradictions = state.get("contradictions") or []
    if contradictions:  # each loser superseded (archived with the reason), a contradicts link from its winner
        losers = {c["loser"]: c for c in contradictions}
        archives = [a for a in archives if a["id"] not in losers] + [
            {"id": c["loser"], "text": c["texts"][1], "reason": f"superseded: {c['reason']}",
             "superseded_by": c["winner"]}
            for c in contradictions]
        promotions = [p for p in promotions if p["id"] not in losers]
        links = list(links) + [{"source_id": c["winner"], "target_id": c["loser"], "relation": CONTRADICTS,
                                "reason": c["reason"]} for c in contradictions]
    dry_run = bool(state.get("dry_run"))
    applied = {"changed": [], "summary_ids": [], "relations": [], "skipped": [], "previous_status": {},
               "restore": {}, "relations_moved": []}
    upkeep = {"merged": [], "relations": [], "repointed": []}
    entity_rows: list[dict] = []  # the entities merged away, as they were (a rollback writes them back)
    written: list[dict] = []
    if not dry_run:
        seen = {m["id"]: m["updated_at"] for m in mems if m["status"] not in ("merged", "archived")}
        sql = services.sql
        with sql.scope_lock(scope):
            applied = sql.apply_consolidation(scope, trace_id=trace_id, seen=seen, merges=merges,
                                              summaries=summaries, archives=archives, promotions=promotions)
            if entity_merges:  # SQL truth first, then the graph and the entity vectors (gone ones deleted)
                entity_rows = sql.entity_rows([m["merged"] for m in entity_merges])
                upkeep = sql.merge_entities(entity_merges, trace_id=trace_id)
                entity_rows = [e for e in entity_rows if e["id"] in set(upkeep["merged"])]
            cached = vector_cache.pop(trace_id)
            given = [i for i in applied["changed"] if i in cached]
            services.projector.sync_memories(given, vectors=[cached[i] for i in given])
            services.projector.sync_memories([i for i in applied["changed"] if i not in cached])
            services.projector.sync_relations(applied["relations"] + upkeep["relations"])
            if upkeep["merged"]:
                services.projector.sync_entities(upkeep["merged"] + sorted({m["survivor"] for m in entity_merges}))
            written = sql.add_consolidation_links(scope, links, trace_id=trace_id) if links else []
    skipped = set(applied["skipped"])
    ended = [] if dry_run else end_idle_runs(services.sql, scope, state.get("ended_runs") or [], trace_id, skipped)
    done_merges = [m for m in merges if not {m["survivor"], m["merged"]} & skipped]
    done_archives = [a for a in archives if a["id"] not in skipped]
    report = {
        "trace_id": trace_id, "dry_run": dry_run, "memories": len(mems),
        "staged_seen": sum(1 for m in mems if m["status"] == "staged"),
        "pairs": len(state.get("pairs") or []),
        "merged": len(done_merges), "merged_by_model": sum(1 for m in done_merges if m["by"] == "model"),
        "compressed": len(applied["summary_ids"]) if not dry_run else len(summaries),
        "summarized_sources": sum(len(x["sources"]) for x in summaries),
        "digests": sum(1 for x in summaries if x.get("digest")),
        "archived": len(done_archives),
        "contradictions": sum(1 for c in contradictions if c["loser"] not in skipped),
        "entities_merged": len(upkeep["merged"]) if not dry_run else len(entity_merges),
        "links_found": len(written) if not dry_run else len(links),
        "cause_check": (state.get("cause_check") or {}).get("by", "none"),
        "promoted": sum(1 for p in promotions if p["layer"] == "long_term" and p["id"] not in skipped),
        "relations_repointed": len(applied["relations"]) + len(upkeep["relations"]),
        "model_calls": int(state.get("model_calls") or 0),
        "model_problems": list(state.get("model_problems") or []),
        "skipped_changed": sorted(skipped),
        "runs_ended": ended if not dry_run else [r["run_id"] for r in state.get("ended_runs") or []],
        "summary_ids": applied["summary_ids"],
        "timings_ms": {**(state.get("timings") or {}), "apply": elapsed_ms(start)},
    }
    if not dry_run:
        raw = state.get("model_raw") or {}
        services.sql.save_judgment(
            trace_id, scope=scope, operation_type=OPERATION_TYPE,
            input_content=f"consolidation pass over {len(mems)} memories ({report['staged_seen']} staged), "
                          f"as of {iso_time(state.get('now_ts'))}",
            llm_response="\n\n".join(f"[{step}]\n{text}" for step, text in raw.items()) or None,
            parsed_operations={"merges": merges, "contradictions": contradictions, "summaries": summaries,
                               "archives": archives,
                               "entity_merges": entity_merges, "entity_decisions": state.get("entity_decisions") or [],
                               "links": links, "promotions": promotions, "cause_check": state.get("cause_check") or {}},
            reasoning=f"merged {report['merged']} ({report['merged_by_model']} by the model), "
                      f"{report['contradictions']} contradicted memories superseded, "
                      f"{report['compressed']} summaries, archived {report['archived']}, "
                      f"{report['entities_merged']} entities merged, {report['links_found']} links, "
                      f"{report['promoted']} promoted to long-term",
            executed_operations={"changed": len(applied["changed"]), "summary_ids": applied["summary_ids"],
                                 "relations": [r["id"] for r in applied["relations"]], "skipped": report["skipped_changed"],
                                 "previous_status": applied["previous_status"], "entities_merged": upkeep["merged"],
                                 "relations_repointed": upkeep["repointed"], "links": [w["id"] for w in written],
                                 # what history rows cannot carry, for a rollback (SQLStore.undo_consolidation)
                                 "restore": applied["restore"], "relations_moved": applied["relations_moved"],
                                 "entity_rows": entity_rows,
                                 "entity_merges": [{"survivor": m["survivor"], "merged": m["merged"]}
                                                   for m in entity_merges if m["merged"] in set(upkeep["merged"])]},
            execution_success=True, model_name=model_name_of(services.judgment_llm) if raw else None,
            latency_ms=sum(v for v in report["timings_ms"].values()), status="done")
    else:
        vector_cache.pop(trace_id)
    return {"report": report}
