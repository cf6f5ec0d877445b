"""Chat models of MemoryX: `make_chat_model(spec, settings)` and the offline rule-based model."""

from memoryx.models.factory import make_chat_model, model_name_of

__all__ = ["make_chat_model", "model_name_of"]
