"""Search as data: the plan a search follows, its named recipes, the ranking knobs, rerankers, the dates a
query names, its SQL reads, access recording and the ready-to-paste context block. The search graph's nodes
(memoryx.nodes) read these.

Import the module you need: this package imports nothing itself, so a module of it does not load the others
(the model reranker's chat-model stack among them).

May import: runtime, stores, models, prompts, core. Never a node, a graph or the API.
"""
