"""Folding fading short-term memories into a long-term note before they are archived.

A consolidation pass archives what the forgetting curve has let fade. A short-term memory that fades has
never been promoted, and a summary may not stand for it yet: archiving it alone would leave its fact only in
the archive. So the fading short-term memories of a pass that no summary stands for are grouped (by category and type,
FOLD_GROUP at most per note) and the model writes one compact note per group that keeps every fact (the
offline model joins them). Each note is a summary memory in the long-term layer (metadata abstraction
"summary", layer "long_term", sources = the folded ids); the folded memories are archived as planned, now
pointing to their note (summary_id), restorable like any archived memory. A group of one is archived alone:
the archive keeps it, and one memory needs no note. When the model's answer is unusable nothing is folded
this pass and the memories are archived as before (the report names the problem).
"""

from __future__ import annotations

from typing import Any

from memoryx.lifecycle import prompts
from memoryx.lifecycle.layers import LONG_TERM, SHORT_TERM, layer_of
from memoryx.models.llm_io import RetriesExhausted
from memoryx.models.step_calls import ask_or_fall_back

FOLD_GROUP = 10  # memories per note: a note a search can still match and return whole


def foldable(memory: dict) -> bool:
    """A fading memory that needs a note: short-term, not already stood for by a summary."""
    return layer_of(memory) == SHORT_TERM and memory.get("status") != "summarized"


def fold_fading(services: Any, state: dict, archives: list[dict]) -> dict:
    """{"summaries": the pass's summaries plus one long-term note per group of fading short-term memories,
    "model_calls", "model_raw", "model_problems"} (only the keys that changed)."""
    mems = {m["id"]: m for m in state.get("memories") or []}
    already = {i for x in state.get("summaries") or [] for i in x["sources"]}
    fading = [a["id"] for a in archives if a["id"] in mems and a["id"] not in already and foldable(mems[a["id"]])]
    # a note of one kind reads (and embeds) better than a mix: group by category and type, oldest first
    fading.sort(key=lambda i: (str(mems[i].get("category") or ""), str(mems[i].get("memory_type") or ""),
                               str(mems[i].get("created_at") or "")))
    groups = [fading[i:i + FOLD_GROUP] for i in range(0, len(fading), FOLD_GROUP)]
    groups = [g for g in groups if len(g) >= 2]
    if not groups:
        return {}
    reply = ask_or_fall_back(services.judgment_llm, prompts.digest_messages(groups, {i: mems[i]["memory"] for i in fading}),
                             prompts.parse_summaries, step="consolidation fold", retry_prompt=prompts.RETRY,
                             fallback="unusable, nothing folded this pass")
    out: dict = {"model_calls": reply.calls, "model_raw": {"fold": reply.raw}}
    if isinstance(reply, RetriesExhausted):
        out["model_problems"] = [{"step": "fold", "problem": reply.problem}]
        return out
    written = {x.cluster: x for x in reply.value.summaries}
    notes = []
    for n, group in enumerate(groups, start=1):
        x = written.get(n)
        if x is None:
            continue
        sources = [mems[i] for i in group]
        notes.append({"text": x.text, "sources": group, "level": "summary", "layer": LONG_TERM,
                      "memory_type": "semantic", "importance": max(float(m.get("importance") or 0.5) for m in sources),
                      "source_texts": [m["memory"] for m in sources],
                      "reason": f"{len(group)} fading short-term memories folded into a long-term note before archiving"})
    out["summaries"] = list(state.get("summaries") or []) + notes
    return out
