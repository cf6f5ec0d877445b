"""The add graph: conversation -> reconciled memories and knowledge graph.

    validate_input ─┬─ (empty) ─────────────────────────────────────────────────────────────────────┐
                    ├─ (infer=False) store_raw ─────────────────────────────────────┐                │
                    └─ extract_facts ─(no facts)────────────────────────────────────┼────────────────┤
                          └─ retrieve_similar ─ judge ─[review]─ execute_ops ─┬─ (stale) ↺ retrieve_similar
                                                                              └─ update_profile  │                │
                                                      ─ [build_episodes, when kept] ┬─────────────┤
                                                 (graph) extract_relations ─ link_entities ─ resolve_graph_conflicts ┴─ finalize

update_profile and build_episodes keep the user/group profiles and write the episode memories
(MEMORYX_PROFILES, MEMORYX_EPISODES; update_profile returns at once when off; build_episodes is only
entered when episodes are kept: MEMORYX_EPISODES, or a group conversation naming its speakers, whose
participants each get their own episode, MEMORYX_PARTICIPANT_EPISODES).
An inferred add with no facts (a question, small talk) goes to build_episodes too: its turns belong to the
conversation's episode, which grows across add calls.

`builder` is exported (tests, embedding) and `graph` is compiled without persistence (for `langgraph dev`,
which brings its own checkpointer). The Python API compiles with `compile_add_graph(make_checkpointer())`;
each run's thread id is its trace id, and its config carries the deadline of its model calls
(settings.add_time_budget_s from the start of the run, or of its resumption: `add_run_config`). The final state key `result` is mem0-shaped:
{"results": [{"id", "memory", "event", "previous_memory"?}], "relations": {"added_entities": [...],
"deleted_entities": [...]}, "trace_id"}, and beside mem0's keys "facts_count" and "extracted_entities" [{"name",
"entity_type"?}].
"""

from __future__ import annotations

import time
from typing import Any, Literal

from langgraph._internal._constants import CONFIG_KEY_DURABILITY
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import DEADLINE_KEY
from memoryx.nodes.episodes import build_episodes, keeps_episodes
from memoryx.nodes.execute_ops import execute_ops
from memoryx.nodes.extract_facts import extract_facts
from memoryx.nodes.graph_conflicts import resolve_graph_conflicts
from memoryx.nodes.graph_linking import link_entities
from memoryx.nodes.graph_relations import extract_relations, graph_active
from memoryx.nodes.judge import judge
from memoryx.nodes.retrieve_similar import retrieve_similar
from memoryx.nodes.review import review
from memoryx.nodes.store_raw import store_raw
from memoryx.nodes.update_profile import update_profile
from memoryx.nodes.validate_input import validate_input
from memoryx.runtime.context import Context, context_of, services_of
from memoryx.state import AddInput, AddOutput, AddState

GRAPH_NAME = "memoryx_add"


def finalize(state: AddState) -> dict:
    """The mem0-compatible result of the run."""
    changes = state.get("graph_changes") or {}
    relations = {"added_entities": list(changes.get("added_entities") or []),
                 "deleted_entities": list(changes.get("deleted_entities") or [])}
    executed = list(state.get("executed") or [])
    facts = list(state.get("facts") or []) + list(state.get("agent_facts") or [])
    # beside mem0's keys: how many facts the run read (infer=False: each message stored is one) and the
    # entities it named (the graph step's; none without a graph backend)
    result = {"results": executed, "relations": relations, "trace_id": state.get("trace_id"),
              "facts_count": len(facts) if state.get("infer") is not False
              else sum(1 for r in executed if r.get("event") == "ADD"),
              "extracted_entities": [{"name": e["name"], **({"entity_type": e["entity_type"]} if e.get("entity_type") else {})}
                                     for e in state.get("entities") or [] if isinstance(e, dict) and e.get("name")]}
    if state.get("episodes"):  # the episode memories of the run (MEMORYX_EPISODES)
        result["episodes"] = list(state["episodes"])
    return {"result": result}


# ------------------------------------------------------------------------------------------------ routing


def route_input(state: AddState) -> Literal["extract_facts", "store_raw", "finalize"]:
    if not state.get("normalized_messages"):
        return "finalize"  # empty or whitespace input: nothing to do, nothing written
    if state.get("infer") is False:
        return "store_raw"
    return "extract_facts"


def route_facts(state: AddState, runtime: Runtime[Context]) -> Literal["retrieve_similar", "build_episodes",
                                                                      "extract_relations", "finalize"]:
    # no facts (a question, small talk): the turns still belong to the conversation's episode
    return "retrieve_similar" if (state.get("facts") or state.get("agent_facts")) else route_conversation(state, runtime)


def route_judgment(state: AddState, runtime: Runtime[Context]) -> Literal["review", "execute_ops"]:
    return "review" if context_of(runtime).review and state.get("operations") else "execute_ops"


def route_executed(state: AddState) -> Literal["retrieve_similar", "update_profile"]:
    if state.get("stale"):
        return "retrieve_similar"  # a concurrent add changed the similar memories: judge again
    return "update_profile"


def route_conversation(state: AddState, runtime: Runtime[Context]) -> Literal["build_episodes", "extract_relations",
                                                                             "finalize"]:
    """Into build_episodes only when episodes are kept (MEMORYX_EPISODES, off by default; a group conversation
    naming its speakers, MEMORYX_PARTICIPANT_EPISODES, on by default): a step that would return at once still
    costs a LangGraph step and two checkpoint writes (~1 ms of an add)."""
    if keeps_episodes(state, services_of(runtime).settings):
        return "build_episodes"
    return route_episodes(state, runtime)


def route_episodes(state: AddState, runtime: Runtime[Context]) -> Literal["extract_relations", "finalize"]:
    """After the profile and episode steps: the graph half of an inferred add."""
    if state.get("infer") is not False and graph_active(runtime) and state.get("executed"):
        return "extract_relations"
    return "finalize"


# ------------------------------------------------------------------------------------------------ wiring

builder = StateGraph(AddState, context_schema=Context, input_schema=AddInput, output_schema=AddOutput)
builder.add_node("validate_input", validate_input)
builder.add_node("extract_facts", extract_facts)
builder.add_node("store_raw", store_raw)
builder.add_node("retrieve_similar", retrieve_similar)
builder.add_node("judge", judge)
builder.add_node("review", review)
builder.add_node("execute_ops", execute_ops)
builder.add_node("update_profile", update_profile)
builder.add_node("build_episodes", build_episodes)
builder.add_node("extract_relations", extract_relations)
builder.add_node("link_entities", link_entities)
builder.add_node("resolve_graph_conflicts", resolve_graph_conflicts)
builder.add_node("finalize", finalize)

builder.add_edge(START, "validate_input")
builder.add_conditional_edges("validate_input", route_input, ["extract_facts", "store_raw", "finalize"])
builder.add_conditional_edges("extract_facts", route_facts, ["retrieve_similar", "build_episodes", "extract_relations", "finalize"])
builder.add_edge("retrieve_similar", "judge")
builder.add_conditional_edges("judge", route_judgment, ["review", "execute_ops"])
builder.add_edge("review", "execute_ops")
builder.add_conditional_edges("store_raw", route_conversation, ["build_episodes", "extract_relations", "finalize"])
builder.add_conditional_edges("execute_ops", route_executed, ["retrieve_similar", "update_profile"])
builder.add_conditional_edges("update_profile", route_conversation, ["build_episodes", "extract_relations", "finalize"])
builder.add_conditional_edges("build_episodes", route_episodes, ["extract_relations", "finalize"])
builder.add_edge("extract_relations", "link_entities")
builder.add_edge("link_entities", "resolve_graph_conflicts")
builder.add_edge("resolve_graph_conflicts", "finalize")
builder.add_edge("finalize", END)


# Checkpoint durability of an add run: "sync" writes each step's checkpoint before the next step starts.
# LangGraph's default "async" writes it on a worker thread while the next step runs; on a busy 2-core machine
# that thread fights the run for the GIL and an add took 15-30 ms longer (bench/bench_add.py), and a
# crash could lose the last step's checkpoint (the resumed run redid the step). Never "exit": every step
# must stay checkpointed so that a killed add resumes where it stopped.
ADD_DURABILITY = "sync"

# Worker threads of an add run's LangGraph executor. Every invoke builds its own thread pool (langchain_core's
# get_executor_for_config) and, unbounded, started ~5 threads per add for checkpoint writes (6.0 ->
# 2.6 ms of Thread.start per add). The add graph has no parallel branch (one task per superstep, run inline
# in the caller's thread), so the pool only ever runs checkpoint writes, which langgraph chains in order
# anyway. Why 1 cannot deadlock (langgraph 1.2, pregel/_executor.py, _loop.py, _runner.py):
# * sync: a 1-worker pool runs jobs in submission order, and the only job that waits on another (a
#   checkpoint save waiting for the previous save and its delta writes) waits on jobs submitted before it.
#   The one job that blocks on the caller (the stream waiter) exists only when streaming "messages" or
#   "custom" modes or subgraphs, which the add runs (invoke) never do.
# * async (AsyncMemory): max_concurrency gates each background coroutine with an asyncio.Semaphore(1);
#   coroutines take it in the order they were submitted, and again a save only awaits saves and writes
#   submitted before it. Node tasks are not gated when a superstep has one task (the add graph's case), and
#   sync node functions run in the event loop's default executor, not under the semaphore. Functional-API
#   `call`s / `Send` fan-out that await a child task would need more than 1: the add graph has neither.
ADD_MAX_CONCURRENCY = 1


def compile_add_graph(checkpointer: Any = None):
    """The add graph compiled with a checkpointer (see memoryx.runtime.checkpointing.make_checkpointer), whose runs
    save every step's checkpoint before the next one (ADD_DURABILITY)."""
    compiled = builder.compile(checkpointer=checkpointer, name=GRAPH_NAME)
    if checkpointer is None:
        return compiled  # nothing to save (and LangGraph 1.2's "sync" needs a saver)

    # the key `invoke(durability=...)` sets: a default of the compiled graph covers every invoke and resume
    return compiled.with_config(configurable={CONFIG_KEY_DURABILITY: ADD_DURABILITY})


def add_run_config(trace_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None, services: Any = None, run_name: str = GRAPH_NAME,
                   time_budget_s: float | None = None) -> dict:
    """Config of one add run: thread id = trace id; LangSmith tags/metadata with trace id, user and model;
    the deadline of the run's model calls (`time_budget_s`, default the services' add_time_budget_s)."""

    models = {}
    if services is not None:
        models = {role: model_name_of(getattr(services, f"{role}_llm")) for role in ("extraction", "judgment", "graph")}
    tags = [f"trace_id:{trace_id}"] + ([f"user_id:{user_id}"] if user_id else []) + \
           sorted({f"model:{m}" for m in models.values()})
    metadata = {"trace_id": trace_id, "user_id": user_id, "agent_id": agent_id, "run_id": run_id,
                **{f"{role}_model": m for role, m in models.items()}}
    if time_budget_s is None and services is not None:
        time_budget_s = services.settings.add_time_budget_s
    configurable: dict[str, Any] = {"thread_id": trace_id}
    if time_budget_s:
        configurable[DEADLINE_KEY] = time.time() + time_budget_s
    return {"configurable": configurable, "run_name": run_name, "tags": tags,
            "metadata": {k: v for k, v in metadata.items() if v is not None},
            "max_concurrency": ADD_MAX_CONCURRENCY}


graph = compile_add_graph()
