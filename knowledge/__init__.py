"""What the memory knows about people, places and things: the knowledge graph's side of a memory's life
(entity and relation extraction, entity linking, conflict deltas), episodes of a conversation, and user and
group profiles.

May import: runtime, stores, models, prompts, core. Never a node, a graph or the API.
"""
