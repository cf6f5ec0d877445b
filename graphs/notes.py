"""notes: a graph that keeps a user's notes in LangGraph's long-term store, the way any LangGraph graph does
(`runtime.store`), with no MemoryX import. Served by `langgraph dev` (langgraph.json), whose store is MemoryX
(memoryx.api.langgraph_store.served_store): what this graph puts is a MemoryX memory of the user, recalled by the
`search` and `chat` graphs too, and what it finds is MemoryX's recall.

    input  {"user_id": "alice", "note": "The spare key is under the blue flowerpot"}   -> {"saved": key}
    input  {"user_id": "alice", "query": "where is the spare key?"}                    -> {"found": [...]}
"""

from __future__ import annotations

import uuid

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

NAMESPACE = "memories"  # ("memories", user_id): the store's default rule reads user_id from it


class NotesState(TypedDict, total=False):
    user_id: str
    note: str
    query: str
    limit: int
    saved: str
    found: list[dict]


def keep_notes(state: NotesState, runtime: Runtime) -> dict:
    if runtime.store is None:
        raise ValueError("The notes graph needs a store: compile it with store=..., or serve it with langgraph dev.")
    if not state.get("user_id"):
        raise ValueError("user_id is required: the notes are kept per user.")
    namespace = (NAMESPACE, state["user_id"])
    out: dict = {}
    if state.get("note"):
        out["saved"] = str(uuid.uuid4())
        runtime.store.put(namespace, out["saved"], {"content": state["note"]})
    if state.get("query"):
        items = runtime.store.search(namespace, query=state["query"], limit=state.get("limit") or 5)
        out["found"] = [{"key": i.key, "content": i.value.get("content"), "score": i.score} for i in items]
    return out


builder = StateGraph(NotesState)
builder.add_node("keep_notes", keep_notes)
builder.add_edge(START, "keep_notes")
builder.add_edge("keep_notes", END)
graph = builder.compile()  # the server supplies the store (and the checkpointer)
