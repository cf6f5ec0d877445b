"""One typed settings object for MemoryX, read from `MEMORYX_*` environment variables.

Every knob of the system lives here so that the README's configuration table, the CLI, the server and
the graphs all agree: code reads a setting as an attribute of `Settings`, never with a fallback default. An
optional dotenv-style file (`MEMORYX_ENV_FILE`, default `.env`) is read too. A `MEMORYX_*` variable that
names no setting (a typo such as MEMORYX_SEARCH_MOD) is logged as a warning naming the closest real one,
once, when the process-wide settings load.
"""

from __future__ import annotations

import difflib
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

log = logging.getLogger(__name__)

ENV_PREFIX = "MEMORYX_"
# MEMORYX_ variables that are not settings: the env file's location, and the test suite's own switches
ENV_NOT_SETTINGS = ("MEMORYX_ENV_FILE",)
ENV_TEST_PREFIX = "MEMORYX_TEST_"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=os.environ.get("MEMORYX_ENV_FILE", ".env"),
        env_file_encoding="utf-8",
        extra="ignore",
    )

    # --- where things live -------------------------------------------------------------------
    data_dir: Path = Field(Path(".memoryx"), description="Directory for the embedded stores (SQLite, Qdrant shard, FalkorDB files, checkpoints).")

    # --- system of record ----------------------------------------------------------------------
    sql_url: str | None = Field(None, description="SQLAlchemy URL of the system of record. Unset: SQLite at DATA_DIR/memoryx.db. PostgreSQL: postgresql+psycopg://user@host/db.")

    # --- vector store --------------------------------------------------------------------------
    vector_backend: Literal["edge", "qdrant"] = Field("edge", description="'edge': the Qdrant engine in-process (qdrant-edge-py) under DATA_DIR/qdrant. 'qdrant': a Qdrant server via langchain-qdrant (set QDRANT_URL).")
    qdrant_url: str | None = Field(None, description="Qdrant server URL for vector_backend=qdrant, or ':memory:' / a path for the client's local mode.")
    qdrant_api_key: str | None = Field(None, description="API key for the Qdrant server.")
    collection_prefix: str = Field("memoryx", description="Prefix of the Qdrant collections (<prefix>_memories, <prefix>_entities).")

    # --- graph store ---------------------------------------------------------------------------
    graph_backend: Literal["falkordb", "neo4j", "none"] = Field("falkordb", description="'falkordb': embedded FalkorDB started by MemoryX (private unix socket, native protocol), or the FalkorDB server at FALKORDB_URL. 'neo4j': a Neo4j server at NEO4J_URL. 'none': no graph.")
    neo4j_url: str | None = Field(None, description="Bolt URL of the graph server for graph_backend=neo4j (bolt://host:7687).")
    neo4j_username: str = Field("neo4j", description="Graph server user name.")
    neo4j_password: str = Field("", description="Graph server password.")
    falkordb_url: str | None = Field(None, description="A FalkorDB server for graph_backend=falkordb (redis://:password@host:port, rediss:// for TLS). Unset: the embedded server under DATA_DIR/falkordb, which has no TCP port.")

    # --- models --------------------------------------------------------------------------------
    llm: str = Field("offline", description="Default chat model for every role: 'offline' (rule-based demo/test model) or 'provider:model', e.g. 'openai:gpt-4o-mini'.")
    extraction_llm: str | None = Field(None, description="Chat model for fact extraction (defaults to LLM).")
    judgment_llm: str | None = Field(None, description="Chat model for the ADD/UPDATE/DELETE/NONE judgment (defaults to LLM).")
    graph_llm: str | None = Field(None, description="Chat model for entity/relation extraction and graph conflicts (defaults to LLM).")
    llm_base_url: str | None = Field(None, description="OpenAI-compatible base URL (vLLM, Ollama, a private endpoint).")
    llm_api_key: str | None = Field(None, description="API key for the chat model endpoint (falls back to OPENAI_API_KEY).")
    llm_temperature: float = Field(0.0, description="Sampling temperature of the chat models.")
    graph_extraction_mode: Literal["auto", "tools", "json"] = Field("auto", description="How entities/relations are extracted: function-calling tools, JSON mode, or tools with JSON fallback.")

    embedding_model: str = Field("local:all-MiniLM-L6-v2", description="'local:all-MiniLM-L6-v2' (offline, 384 dims) or 'openai:<model>' for any OpenAI-compatible embeddings endpoint.")
    embedding_base_url: str | None = Field(None, description="Base URL of the OpenAI-compatible embeddings endpoint.")
    embedding_api_key: str | None = Field(None, description="API key of the embeddings endpoint (falls back to OPENAI_API_KEY).")
    embedding_dims: int | None = Field(None, description="Embedding dimensions; required for remote models unless the model's default is known.")
    embedding_batch_size: int = Field(64, description="Texts per embedding batch.")

    # --- add pipeline --------------------------------------------------------------------------
    similarity_threshold: float = Field(0.7, description="Minimum cosine similarity for an existing memory to be shown to the judge.")
    similar_top_k: int = Field(5, description="Existing memories retrieved per extracted fact.")
    entity_merge_threshold: float = Field(0.9, description="Cosine similarity above which a new entity is linked to an existing one.")
    review: bool = Field(False, description="Interrupt before executing operations so a human can approve or edit them.")
    max_input_chars: int = Field(32000, description="Largest accepted input to add(); larger inputs are refused with this limit named.")
    max_message_chars: int = Field(8000, description="Longest single message; longer ones are split into chunks of this size.")
    checkpointer: Literal["auto", "sqlite", "postgres", "memory", "none"] = Field("auto", description="Checkpoint saver of the add graph. 'auto': PostgreSQL if SQL_URL is PostgreSQL, else SQLite at DATA_DIR/checkpoints.db.")

    # --- search --------------------------------------------------------------------------------
    search_mode: Literal["fast", "deep", "auto", "hybrid", "vector", "keyword"] = Field("auto", description="Search recipe (memoryx/search/recipes.py): fast (no graph expansion), deep (depth 2), auto (graph when the query names known entities), hybrid (dense + keyword only), vector (dense only), keyword (BM25 only).")
    graph_expand_depth: int = Field(1, description="Breadth-first expansion depth of the graph path (0-2).")
    fusion: Literal["rrf", "weighted"] = Field("weighted", description="How recall paths are fused: weighted scores (default; best on LoCoMo) or reciprocal-rank fusion.")
    rrf_k: int = Field(60, description="Reciprocal-rank-fusion constant.")
    weight_relevance: float = Field(0.7, description="Weight of the fused relevance in the final score.")
    weight_importance: float = Field(0.1, description="Weight of the memory's importance in the final score.")
    weight_recency: float = Field(0.1, description="Weight of recency decay in the final score.")
    weight_access: float = Field(0.1, description="Weight of access frequency in the final score.")
    recency_half_life_days: float = Field(30.0, description="Half-life of the recency decay, in days.")
    search_tuning: dict[str, Any] = Field(default_factory=dict, description="JSON overrides of the finer ranking knobs documented in memoryx/search/tuning.py, e.g. {\"weight_keyword\": 0.6, \"context_window\": 3}.")
    search_rewrite: bool = Field(False, description="Let the extraction model rewrite each search query (plus extra names and keywords) before searching; a failure searches with the plain query.")
    reranker: str | None = Field(None, description="Optional reranker: unset or 'none' (off), 'cross-encoder:<path>', or a chat model spec.")

    # --- server --------------------------------------------------------------------------------
    # validated by memoryx.server.auth.KeyRing (strict, entries named by fingerprint, never by the key itself)
    api_keys: dict[str, Any] = Field(default_factory=dict, description="JSON map API key -> list of user ids it may touch, or {\"users\": [...], \"agents\": [...], \"admin\": false}. Empty: local development mode, no auth.")

    # --- tenancy and input limits (issue 9 §2, §4) ---------------------------------------------
    agent_memory: Literal["tenant", "global"] = Field("tenant", description="Where the assistant's own memories learned in a user's conversation live: 'tenant' (the user's tenancy, user_id + agent_id; no other user's add sees them) or 'global' (agent_id only, shared by every user of the agent). add(agent_memory=...) overrides it per call.")
    max_name_chars: int = Field(256, description="Longest message `name` (speaker) accepted by add().")
    max_messages: int = Field(1000, description="Most messages in one add() call.")
    max_metadata_bytes: int = Field(16384, description="Largest metadata dict of a memory or an add() call, in bytes of its JSON.")
    max_query_chars: int = Field(8000, description="Longest search query.")
    max_request_bytes: int = Field(1_048_576, description="Largest HTTP request body the server accepts (413 above).")
    max_batch_inputs: int = Field(32, description="Most inputs in one LangServe batch request.")

    # --- CLI through a running server, MCP over stdio (issue 11) ---------------------------------
    url: str | None = Field(None, description="URL of a running `memoryx serve` (e.g. http://127.0.0.1:8000). Set: every CLI command (and `memoryx mcp`) goes through that server over HTTP instead of opening the embedded stores.")
    api_key: str | None = Field(None, description="API key the CLI sends to MEMORYX_URL (X-API-Key); one of the server's MEMORYX_API_KEYS.")
    mcp_user_id: str | None = Field(None, description="User id(s), comma-separated, that `memoryx mcp` (stdio) serves; the model can act only for them. `memoryx mcp --user-id` overrides it.")

    def resolved_sql_url(self) -> str:
        if self.sql_url:
            return self.sql_url
        return f"sqlite:///{(self.data_dir / 'memoryx.db').resolve()}"

    def model_for(self, role: Literal["extraction", "judgment", "graph"]) -> str:
        return getattr(self, f"{role}_llm") or self.llm


def unknown_env_names(environ: dict[str, str] | None = None) -> dict[str, str | None]:
    """{unknown MEMORYX_ variable: the closest setting's variable, or None} for the variables of `environ`
    (default: the process environment) that name no setting."""
    environ = os.environ if environ is None else environ
    known = [ENV_PREFIX + name.upper() for name in Settings.model_fields]
    out: dict[str, str | None] = {}
    for name in sorted(environ):
        upper = name.upper()
        if (not upper.startswith(ENV_PREFIX) or upper in known or upper in ENV_NOT_SETTINGS
                or upper.startswith(ENV_TEST_PREFIX)):
            continue
        close = difflib.get_close_matches(upper, known, n=1, cutoff=0.6)
        out[name] = close[0] if close else None
    return out


_warned: set[str] = set()


def warn_unknown_env(environ: dict[str, str] | None = None) -> None:
    """Log a warning for each MEMORYX_ variable that names no setting (each name once per process)."""
    for name, close in unknown_env_names(environ).items():
        if name in _warned:
            continue
        _warned.add(name)
        hint = f"; did you mean {close}?" if close else ""
        log.warning("environment variable %s is not a MemoryX setting and is ignored%s", name, hint)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings read from the environment (cached; call `get_settings.cache_clear()` in tests)."""
    warn_unknown_env()
    return Settings()
