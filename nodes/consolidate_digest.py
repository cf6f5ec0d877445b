"""consolidate_digest: a period's episodic memories (more than settings.digest_min_memories in one
settings.digest_period) summarised into one memory linked to its sources (memoryx.lifecycle.digest): by the
chat model in ONE batched call for every period of the pass, or — the offline model — an extractive summary.
Adds to the pass's summaries; consolidate_apply writes them (the sources demoted, status summarized), and the
pass's rollback undoes them like a compression."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.lifecycle import prompts
from memoryx.lifecycle.cause_check import is_offline
from memoryx.lifecycle.contradictions import superseded_ids
from memoryx.lifecycle.digest import extractive, periods
from memoryx.lifecycle.state import ConsolidateState
from memoryx.models.llm_io import RetriesExhausted
from memoryx.models.step_calls import ask_or_fall_back, call_record
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def consolidate_digest(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    s = services.settings
    mems = {m["id"]: m for m in state.get("memories") or []}
    summaries = list(state.get("summaries") or [])
    skip = {m["merged"] for m in state.get("merges") or []} | superseded_ids(state) | \
        {i for x in summaries for i in x["sources"]}
    found = periods(list(mems.values()), period=s.digest_period, more_than=s.digest_min_memories, skip=skip)
    out: dict = {"timings": {"digest": elapsed_ms(start)}}
    if not found:
        return out
    texts = {i: mems[i]["memory"] for _, ids in found for i in ids}
    written: dict[int, str] = {}
    if is_offline(services.judgment_llm):
        written = {n: extractive(key, [texts[i] for i in ids]) for n, (key, ids) in enumerate(found, start=1)}
        by = "extractive (offline model)"
    else:
        messages = prompts.episode_digest_messages([ids for _, ids in found], texts)
        reply = ask_or_fall_back(services.judgment_llm, messages,
                                 prompts.parse_summaries, step="consolidation digest", retry_prompt=prompts.RETRY,
                                 fallback="unusable, no digest this pass")
        out.update(call_record("digest", reply))
        if not isinstance(reply, RetriesExhausted):
            written = {x.cluster: x.text for x in reply.value.summaries}
        by = "model"
    for n, (key, ids) in enumerate(found, start=1):
        if n not in written:
            continue
        sources = [mems[i] for i in ids]
        summaries.append({"text": written[n], "sources": ids, "level": "summary", "memory_type": "semantic",
                          "importance": max(float(m.get("importance") or 0.5) for m in sources),
                          "source_texts": [m["memory"] for m in sources], "digest": key,
                          "reason": f"digest of {len(ids)} episodic memories of {key} (> {s.digest_min_memories}), "
                                    f"written by {by}"})
    out["summaries"] = summaries
    out["timings"] = {"digest": elapsed_ms(start)}
    return out
