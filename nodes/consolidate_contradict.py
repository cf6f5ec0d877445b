"""consolidate_contradict: contradicting memories of the owner (memoryx.lifecycle.contradictions) resolved by
the seeds' rule (the later event time, then confidence, then importance). Decides only: consolidate_apply
supersedes each loser (archived, restorable, undone by the pass's rollback) with its reason in the judgment
log and writes a `contradicts` link from the winner. Memories merged this pass are left out; the later steps
leave the losers alone (superseded_ids)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.lifecycle.contradictions import contradictions
from memoryx.lifecycle.state import ConsolidateState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from memoryx.runtime.context import Context


def consolidate_contradict(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    merged = {m["merged"] for m in state.get("merges") or []}
    found = contradictions(state.get("memories") or [], skip=merged)
    return {"contradictions": found, "timings": {"contradict": elapsed_ms(start)}}
