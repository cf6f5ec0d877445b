"""The LangGraph workflows: add, search, consolidate and chat. Each file wires its nodes at the bottom and
exports a builder (for tests and subgraphs) and `graph` compiled without persistence (for `langgraph dev`).

May import: nodes, the domain packages, runtime, stores, models, prompts, core, and the graph state modules.
"""
