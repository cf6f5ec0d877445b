"""The Python API: `Memory` and `AsyncMemory` (mem0-compatible names and result shapes), the core they share,
the checks of their inputs, mem0 configuration dicts, export and import, running consolidation for the front
ends, and the LangChain tools an agent uses to manage its own memory.

May import: graphs, nodes, the domain packages (ingest, knowledge, lifecycle, search), runtime, stores,
models, prompts, core. Imported by the interfaces (cli, server) and the package facade.
"""
