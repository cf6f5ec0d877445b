"""The live objects the graphs run on: `Services` (stores, embeddings, chat models built from one Settings),
the graphs' run-time `Context`, checkpoint savers, projection recovery and outbox replay, and webhooks.

May import: stores, models, prompts, core.
"""
