"""The model layer: chat models per role (`make_chat_model`), the one place that reads what a model answered
and asks again (llm_io), the knowledge-graph tools, embeddings (MiniLM on ONNX Runtime by default, or an
OpenAI-compatible endpoint), and the offline rule-based chat model for demos and tests.

May import: prompts, core. Never stores, runtime or anything above.
"""

from memoryx.models.factory import make_chat_model, model_name_of

__all__ = ["make_chat_model", "model_name_of"]
