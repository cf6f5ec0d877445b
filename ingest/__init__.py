"""What comes in: the input of an add before the graph judges it. Message normalisation and limits, bulk
ingest (`add_many`), mem0's add options, custom instructions, the chit-chat rule's callers, images,
procedural summaries of agent runs, speakers of group chats, and the LoCoMo reader.

May import: runtime, stores, models, prompts, core. Never a node, a graph or the API.
"""
