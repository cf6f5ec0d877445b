"""consolidate_merge: duplicates. Pairs at cosine >= consolidate_merge_threshold with the same numbers and
polarity merge by rule; the rest of the pairs down to consolidate_judge_threshold go to the judge model in
ONE batched call. Two events of different days are never one (memoryx.lifecycle.similarity.distinct_events). Same-fact pairs collapse into the oldest memory of their group (memoryx.lifecycle.similarity)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.lifecycle import prompts
from memoryx.lifecycle.similarity import distinct_events, split_pairs, survivors
from memoryx.lifecycle.state import ConsolidateState
from memoryx.models.llm_io import RetriesExhausted
from memoryx.models.step_calls import ask_or_fall_back, call_record
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)
MAX_JUDGED_PAIRS = 200  # one call stays within a model's context; the next pass judges the rest


def order_key(mem: dict) -> tuple:
    return (mem.get("created_at") or "", mem["id"])


def consolidate_merge(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    s = services.settings
    mems = {m["id"]: m for m in state.get("memories") or []}
    texts = {i: m["memory"] for i, m in mems.items()}
    pairs = {(a, b): sim for a, b, sim in state.get("pairs") or []
             if not distinct_events(mems[a], mems[b])}  # events of different days: two happenings
    rule, uncertain = split_pairs(pairs, texts, s.consolidate_merge_threshold, s.consolidate_judge_threshold)
    same = [{**p, "by": "rule"} for p in rule]
    out: dict = {"model_calls": 0, "model_raw": {}, "model_problems": []}
    judged = uncertain[:MAX_JUDGED_PAIRS]
    if judged:
        # unusable answers: no model merge this pass; the pairs stay and are judged next time
        reply = ask_or_fall_back(services.judgment_llm, prompts.merge_messages(judged, texts), prompts.parse_merge,
                                 step="consolidation merge judgment", retry_prompt=prompts.RETRY,
                                 fallback="unusable, no model merges this pass")
        out.update(call_record("merge", reply))
        if not isinstance(reply, RetriesExhausted):
            verdicts = {v.pair: v for v in reply.value.pairs}
            for i, p in enumerate(judged, start=1):
                v = verdicts.get(i)
                if v is not None and v.same:
                    same.append({**p, "by": "model", "reason": f"{p['reason']}; model: {v.reason or 'same fact'}"})
    merges = survivors(same, {i: order_key(m) for i, m in mems.items()})
    for m in merges:
        m["texts"] = {"survivor": texts[m["survivor"]], "merged": texts[m["merged"]]}
    out.update(merges=merges, timings={"merge": elapsed_ms(start)})
    return out
