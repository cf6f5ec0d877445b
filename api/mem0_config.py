"""mem0-style configuration dicts translated into MemoryX `Settings` (`Memory.from_config`, `Memory(config)`)."""

from __future__ import annotations

from typing import Any

from memoryx.errors import InvalidInputError
from memoryx.settings import Settings

__all__ = ["settings_from_config"]


def _provider_spec(section: dict | None) -> tuple[str | None, dict]:
    """mem0-style {"provider": "openai", "config": {"model": ...}} -> ("openai:model", config)."""
    if not section:
        return None, {}
    if isinstance(section, str):
        return section, {}
    provider = section.get("provider")
    config = dict(section.get("config") or {})
    model = config.get("model")
    if provider in (None, "offline"):
        return provider, config
    if provider in ("huggingface", "local", "sentence-transformers") and not model:
        return "local:all-MiniLM-L6-v2", config
    if provider in ("huggingface", "sentence-transformers"):
        provider = "local"
    return (f"{provider}:{model}" if model else provider), config


def settings_from_config(config: dict | None) -> Settings:
    """Settings from a dict: either flat `Settings` fields ({"data_dir": ..., "llm": "offline"}) or a mem0
    config ({"llm": {"provider": "openai", "config": {"model": "gpt-4o-mini"}}, "embedder": {...},
    "vector_store": {"provider": "qdrant", "config": {...}}, "graph_store": {...}}). Values not given come
    from the MEMORYX_* environment as usual."""
    config = dict(config or {})
    fields: dict[str, Any] = {}
    llm = config.pop("llm", None)
    if isinstance(llm, dict):
        spec, c = _provider_spec(llm)
        if spec:
            fields["llm"] = spec
        if c.get("openai_base_url") or c.get("base_url") or c.get("ollama_base_url"):
            fields["llm_base_url"] = c.get("openai_base_url") or c.get("base_url") or c.get("ollama_base_url")
        if c.get("api_key"):
            fields["llm_api_key"] = c["api_key"]
        if c.get("temperature") is not None:
            fields["llm_temperature"] = c["temperature"]
    elif llm is not None:
        fields["llm"] = llm
    embedder = config.pop("embedder", None)
    if isinstance(embedder, dict):
        spec, c = _provider_spec(embedder)
        if spec:
            fields["embedding_model"] = spec
        if c.get("openai_base_url") or c.get("base_url"):
            fields["embedding_base_url"] = c.get("openai_base_url") or c.get("base_url")
        if c.get("api_key"):
            fields["embedding_api_key"] = c["api_key"]
        if c.get("embedding_dims"):
            fields["embedding_dims"] = c["embedding_dims"]
    elif embedder is not None:
        fields["embedding_model"] = embedder
    vs = config.pop("vector_store", None)
    if isinstance(vs, dict):
        c = dict(vs.get("config") or {})
        provider = vs.get("provider", "qdrant")
        if provider not in ("qdrant", "edge"):
            raise InvalidInputError(f"vector_store provider {provider!r} is not supported; use 'qdrant' (server) or 'edge' (embedded).")
        if provider == "qdrant" and (c.get("url") or c.get("host") or c.get("path")):
            fields["vector_backend"] = "qdrant"
            if c.get("url"):
                fields["qdrant_url"] = c["url"]
            elif c.get("host"):
                fields["qdrant_url"] = f"http://{c['host']}:{c.get('port', 6333)}"
            else:
                fields["qdrant_url"] = c["path"]
            if c.get("api_key"):
                fields["qdrant_api_key"] = c["api_key"]
        else:
            fields["vector_backend"] = "edge"
        if c.get("collection_name"):
            fields["collection_prefix"] = c["collection_name"]
        if c.get("embedding_model_dims"):
            fields["embedding_dims"] = c["embedding_model_dims"]
    gs = config.pop("graph_store", None)
    if isinstance(gs, dict):
        provider = gs.get("provider", "falkordb")
        c = dict(gs.get("config") or {})
        if provider in ("neo4j", "memgraph") or c.get("url"):
            fields["graph_backend"] = "neo4j"
            fields["neo4j_url"] = c.get("url")
            if c.get("username") is not None:
                fields["neo4j_username"] = c["username"]
            if c.get("password") is not None:
                fields["neo4j_password"] = c["password"]
        elif provider in ("none", None):
            fields["graph_backend"] = "none"
        else:
            fields["graph_backend"] = "falkordb"
    if "history_db_path" in config:  # mem0's SQLite history file
        fields["sql_url"] = f"sqlite:///{config.pop('history_db_path')}"
    config.pop("version", None)
    unknown = [k for k in config if k not in Settings.model_fields]
    if unknown:
        raise InvalidInputError(f"Unknown configuration keys {unknown}; see memoryx.Settings for the accepted fields.")
    fields.update(config)
    return Settings(**fields)
