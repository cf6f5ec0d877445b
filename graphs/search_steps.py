"""The search workflow's steps in order, and `run_search`, which runs them one after the other without LangGraph.

graphs/search.py wires these same steps into the LangGraph graph that Studio, LangServe, subgraph embedding and
traced searches run. `run_search` is what a process that only searches runs (the CLI's `search`): it never
loads LangGraph, about a second of a command's start, and costs no graph bookkeeping per step. Both give the
same result: each step returns a partial state, merged as the graph merges it (`timings` by union, every other
key replaced; the steps run in a line, so no key has two writers in one step).
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryx.nodes.analyze_query import analyze_query
from memoryx.nodes.rank import rank
from memoryx.nodes.recall import recall
from memoryx.runtime.context import Context

SEARCH_STEPS = (("analyze_query", analyze_query), ("recall", recall), ("rank", rank))


@dataclass(frozen=True)
class StepRuntime:
    """What a search step reads of LangGraph's `Runtime`: the run's context."""

    context: Context


def run_search(inp: dict, context: Context) -> dict:
    """The search graph's output ({"result": ...}) for its input, the steps called in the caller's thread."""
    state, runtime = dict(inp), StepRuntime(context)
    for _name, step in SEARCH_STEPS:
        update = dict(step(state, runtime) or {})
        timings = update.pop("timings", None)
        state.update(update)
        if timings:
            state["timings"] = {**state.get("timings", {}), **timings}
    return {"result": state.get("result")}
