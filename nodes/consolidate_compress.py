"""consolidate_compress: clusters of >= consolidate_cluster_min memories whose every pair is above the judge
threshold and may share a summary (events, or facts stating the same substance:
memoryx.lifecycle.similarity.may_share_summary) get one summary memory (abstraction detail -> summary;
summaries of summaries -> pattern), written by the model in ONE batched call; the sources stay, demoted in
ranking (status summarized)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.lifecycle import prompts
from memoryx.lifecycle.contradictions import superseded_ids
from memoryx.lifecycle.similarity import clusters, may_share_summary
from memoryx.lifecycle.state import ConsolidateState
from memoryx.models.llm_io import RetriesExhausted
from memoryx.models.step_calls import ask_or_fall_back, call_record
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)
MAX_CLUSTERS = 50  # per call; the next pass takes the rest


def level_of(sources: list[dict]) -> str:
    levels = {(m.get("metadata") or {}).get("abstraction") or "detail" for m in sources}
    return "pattern" if levels <= {"summary", "pattern"} else "summary"


def consolidate_compress(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    s = services.settings
    merged = {m["merged"] for m in state.get("merges") or []} | superseded_ids(state)  # no summary of a loser
    mems = {m["id"]: m for m in state.get("memories") or []}
    members = [i for i, m in mems.items() if m["status"] in ("staged", "active") and i not in merged]
    pairs = {(a, b): sim for a, b, sim in state.get("pairs") or []}
    groups = clusters(pairs, s.consolidate_judge_threshold, s.consolidate_cluster_min, members,
                      compatible=lambda a, b: may_share_summary(mems[a], mems[b]))[:MAX_CLUSTERS]
    out: dict = {"summaries": [], "model_calls": 0, "model_raw": {}, "model_problems": []}
    if groups:
        texts = {i: m["memory"] for i, m in mems.items()}
        reply = ask_or_fall_back(services.judgment_llm, prompts.summary_messages(groups, texts),
                                 prompts.parse_summaries, step="consolidation summaries", retry_prompt=prompts.RETRY,
                                 fallback="unusable, no compression this pass")
        out.update(call_record("summarize", reply))
        if not isinstance(reply, RetriesExhausted):
            written = {x.cluster: x for x in reply.value.summaries}
            for n, group in enumerate(groups, start=1):
                x = written.get(n)
                if x is None:
                    continue
                sources = [mems[i] for i in group]
                level = "pattern" if level_of(sources) == "pattern" else x.level
                out["summaries"].append({
                    "text": x.text, "sources": group, "level": level,
                    "memory_type": "semantic" if level == "pattern" else sources[0].get("memory_type"),
                    "importance": max(float(m.get("importance") or 0.5) for m in sources),
                    "source_texts": [m["memory"] for m in sources],
                    "reason": f"{len(group)} memories pairwise above cosine {s.consolidate_judge_threshold}"})
    out["timings"] = {"compress": elapsed_ms(start)}
    return out
