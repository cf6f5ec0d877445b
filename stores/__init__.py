"""The stores: SQL is the system of record (stores.sql); vectors (stores.vectors) and the knowledge graph
(stores.graph) are projections rebuilt from it (stores.projections: the outbox and its replay); cross-process
owner locks (stores.locks).

May import: core and third-party drivers only. Never models, runtime or anything above.
"""
