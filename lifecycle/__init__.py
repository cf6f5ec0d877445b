"""The memory that lives (issue 10): consolidation's domain logic, kept apart from the graph's nodes.

- forgetting.py: the forgetting curve (strength per memory type, importance and access; R = exp(-days/S))
- similarity.py: neighbour pairs, the rule for a duplicate, compression clusters
- prompts.py: the batched merge judgment and the cluster summaries, each prompt beside its answer model
- state.py: the consolidate graph's state and report
- schedule.py: the periodic pass inside `memoryx serve`

The graph itself is memoryx.graphs.consolidate; its nodes are memoryx.nodes.consolidate_*.
"""
