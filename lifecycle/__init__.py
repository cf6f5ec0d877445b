"""The memory that lives: consolidation's domain logic (forgetting curve, similarity and clusters, layers,
graph upkeep, causal links, the pass's prompts and state, its schedule), and the operations over a memory's
whole life — retention, purge, rollback by trace id, feedback.

May import: knowledge, search, ingest, runtime, stores, models, prompts, core. Never a node, a graph or the
API. The graph itself is memoryx.graphs.consolidate; its nodes are memoryx.nodes.consolidate_*.
"""
