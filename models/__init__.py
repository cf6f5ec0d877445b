"""The model layer: chat models per role (`make_chat_model`), the one place that reads what a model answered
and asks again (llm_io), the knowledge-graph tools, embeddings (MiniLM on ONNX Runtime by default, or an
OpenAI-compatible endpoint), and the offline rule-based chat model for demos and tests.

Import the module you need (memoryx.models.factory, memoryx.models.embeddings, ...): this package imports
nothing itself, so that loading the encoder does not load LangChain's chat-model stack (~1 s of a CLI search).

May import: prompts, core. Never stores, runtime or anything above.
"""
