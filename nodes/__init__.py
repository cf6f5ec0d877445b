"""The graphs' nodes: small functions `(state, runtime) -> partial state`. Reusable logic that the API or
another graph also calls lives in a domain package (ingest, knowledge, lifecycle, search), not here.

May import: memoryx.state, the domain packages, runtime, stores, models, prompts, core. Never a graph or the API.
"""
