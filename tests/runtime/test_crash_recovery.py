"""Fault injection: kill -9 an add at every node boundary of the add graph and inside the store
writes, restart, and check that the stores converge with no manual reindex.

One "zygote" process per seed imports everything once, with the kill points wired in by the test harness
below (never by production code: the node wrappers and store-method wrappers are installed here, before the
add graph is built). For each kill point it forks a child that opens the stores (this is the restart: the
recovery of the previous child's crash runs here), arms the kill point, runs one add and SIGKILLs itself when
the point is reached. A last child opens the stores once more and checks:

- every live SQL memory is found by a search for its own text;
- the graph's relations (id, ends, validity) equal SQL's; the projection outbox is empty;
- every unfinished add run was resumed (nothing is left half-done in the checkpointer).

Embeddings are langchain-core's deterministic fake (same text, same vector): a MiniLM per child would cost
seconds and a fork after torch is unsafe. The chat model is the offline one; the graph is the embedded
FalkorDB. Seeds: MEMORYX_TEST_CRASH_SEEDS (default "1"; the full run is "1,2,3").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.integration

NODES = ["validate_input", "extract_facts", "retrieve_similar", "judge", "execute_ops", "extract_relations",
         "link_entities", "resolve_graph_conflicts", "finalize"]
# (class path, method, "before" | "after"): "after" a SQL write = committed but not projected yet
STORE_POINTS = [
    ("memoryx.stores.sql.SQLStore", "insert_memory", "after"),
    ("memoryx.stores.sql.SQLStore", "update_memory", "after"),
    ("memoryx.stores.sql.SQLStore", "delete_memory", "after"),
    ("memoryx.stores.sql.SQLStore", "save_judgment", "after"),
    ("memoryx.stores.sql.SQLStore", "clear_projections_later", "before"),  # projected, its jobs still queued
    ("memoryx.stores.sql.SQLStore", "upsert_entities|upsert_entity", "after"),  # the batched write, else the single one
    # an add's invalidations and new relations are one write, else the separate ones
    ("memoryx.stores.sql.SQLStore", "change_relations|add_relations|add_relation", "after"),
    ("memoryx.stores.sql.SQLStore", "orphan_entities", "after"),  # read in the write transaction that deletes them
    ("memoryx.stores.vectors.base.VectorStore", "upsert_memories", "before"),
    ("memoryx.stores.vectors.base.VectorStore", "upsert_memories", "after"),
    ("memoryx.stores.vectors.base.VectorStore", "delete_memories", "before"),
    ("memoryx.stores.graph.store.GraphStore", "upsert_entities", "after"),
    ("memoryx.stores.graph.store.GraphStore", "upsert_relations", "before"),
]
KILL_POINTS = [f"{w}:{n}" for n in NODES for w in ("before", "after")] + \
              [f"{w}:{c.rsplit('.', 1)[1]}.{m.split('|')[0]}" for c, m, w in STORE_POINTS]

ZYGOTE = textwrap.dedent(r'''
    import functools, json, os, random, signal, sys, time
    os.environ["HF_HUB_OFFLINE"] = "1"
    data_dir, seed, points = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    store_points = json.loads(sys.argv[4])
    ARMED = {"point": None}

    def hit(point):
        if ARMED["point"] == point:
            os.kill(os.getpid(), signal.SIGKILL)  # kill -9: no atexit, no finally, no flush

    from langgraph.graph import StateGraph
    _add_node = StateGraph.add_node

    def add_node(self, node, action=None, **kw):
        if isinstance(node, str) and callable(action):
            inner = action

            @functools.wraps(inner)
            def action(*a, __n=node, __f=inner, **k):
                hit("before:" + __n)
                out = __f(*a, **k)
                hit("after:" + __n)
                return out
        return _add_node(self, node, action, **kw)

    StateGraph.add_node = add_node
    import memoryx.graphs.add  # noqa: F401  (built with the wrapped nodes)
    StateGraph.add_node = _add_node

    import importlib
    for cls_path, meths, when in store_points:
        mod, name = cls_path.rsplit(".", 1)
        cls = getattr(importlib.import_module(mod), name)
        # "a|b": the point is on method a, or on b where a does not exist yet; named after a either way
        meth = next(m for m in meths.split("|") if hasattr(cls, m))
        orig = getattr(cls, meth)

        def wrapped(self, *a, __o=orig, __p=f"{when}:{name}.{meths.split('|')[0]}", __w=when, **k):
            if __w == "before":
                hit(__p)
            out = __o(self, *a, **k)
            if __w == "after":
                hit(__p)
            return out
        setattr(cls, meth, functools.wraps(orig)(wrapped))

    from langchain_core.embeddings import DeterministicFakeEmbedding
    from memoryx.api.memory import Memory
    from memoryx.settings import Settings

    settings = Settings(data_dir=data_dir, graph_backend="falkordb", checkpointer="sqlite",
                        similarity_threshold=-1.0, similar_top_k=50, llm="offline", outbox_replay_interval_s=0)

    def open_memory():
        return Memory(settings, embeddings=DeterministicFakeEmbedding(size=384))

    COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka"]
    CITIES = ["Paris", "Berlin", "Madrid", "Oslo", "Lisbon", "Vienna", "Prague", "Dublin"]
    LIKES = ["jazz", "tennis", "sushi", "chess", "hiking", "opera", "cycling", "poetry"]

    def choices(k):
        """(company, city, like) of message k; a like differs from the one before it."""
        if k < 0:
            return None, None, None
        rng = random.Random(seed * 1000 + k)
        company, city, like = rng.choice(COMPANIES), rng.choice(CITIES), rng.choice(LIKES)
        if like == choices(k - 1)[2]:
            like = LIKES[(LIKES.index(like) + 1) % len(LIKES)]
        return company, city, like

    def message(k):
        """Every message takes back the like of the message before it, so every add (after the first)
        judges a DELETE: the kill points on the delete path are reached by the add that arms them."""
        company, city, like = choices(k)
        prev_like = choices(k - 1)[2] or LIKES[-1]
        return (f"I work at {company}. I live in {city}. "
                f"I don't like {prev_like} anymore. I like {like}.")

    def wait_graph_gone(kill):
        try:
            state = json.load(open(os.path.join(data_dir, "falkordb", "server.json")))
            pid = int(state.get("pid") or 0)
        except (OSError, ValueError):
            return
        if pid <= 0:
            return  # never os.kill(0, ...): that is the whole process group
        if kill:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        from memoryx.stores.graph.falkordb_process import pid_alive  # zombies count as gone

        for _ in range(400):
            if not pid_alive(pid):
                return
            time.sleep(0.025)

    outcome = {"killed": [], "not_reached": [], "resumed": 0, "waiting": 0, "seconds": []}
    for k, point in enumerate(points):
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            m = open_memory()
            code = 0 if not m._core.recovered_runs.get("failed") else 3
            rec = m._core.recovered_runs
            with open(os.path.join(data_dir, f"recovered-{k}.json"), "w") as f:
                json.dump({"resumed": len(rec.get("resumed", [])), "waiting": len(rec.get("waiting_review", [])),
                           "failed": rec.get("failed", {})}, f)
            ARMED["point"] = point
            m.add(message(k), user_id="alice")
            ARMED["point"] = None
            m.close()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            outcome["killed"].append(point)
        elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            outcome["not_reached"].append(point)
        else:
            outcome.setdefault("errors", []).append([point, status])
        rec_path = os.path.join(data_dir, f"recovered-{k}.json")
        if os.path.exists(rec_path):
            rec = json.load(open(rec_path))
            outcome["resumed"] += rec["resumed"]
            outcome["waiting"] += rec["waiting"]
            if rec["failed"]:
                outcome.setdefault("errors", []).append([point, rec["failed"]])
        # odd points: the graph server dies with its owner (parent-death SIGTERM, a clean AOF shutdown);
        # even points: it is killed -9 too (a machine crash: unclean, the graph is rebuilt from SQL)
        wait_graph_gone(kill=k % 2 == 0)
        outcome["seconds"].append(round(time.perf_counter() - started, 2))

    # the final restart: recovery, then the checks
    m = open_memory()
    rec = m._core.recovered_runs
    outcome["resumed"] += len(rec.get("resumed", []))
    s = m.services
    live = s.sql.list_memories(None, limit=None)
    missing = []
    for row in live:
        found = m.search(row["memory"], user_id=row["user_id"], agent_id=row["agent_id"], run_id=row["run_id"], limit=10)
        if row["id"] not in {r["id"] for r in found["results"]}:
            missing.append(row["memory"])
    sql_rel = sorted((r["id"], r["source_id"], r["target_id"], bool(r["valid"]))
                     for r in s.sql.list_relations(None, include_invalid=True))
    graph_rel = sorted((r["id"], r["s"], r["t"], bool(r["valid"])) for r in s.graph._run(
        "test", "MATCH (a:Entity)-[r:RELATES]->(b:Entity) RETURN r.id AS id, a.id AS s, b.id AS t, r.valid AS valid", {}))
    unfinished = []
    graph = m._core.add_graph()
    from memoryx.runtime.checkpointing import recent_threads
    for tid in recent_threads(graph.checkpointer, 1000):
        snap = graph.get_state({"configurable": {"thread_id": tid}})
        # a run killed before its input reached the checkpoint has no values: nothing to resume (its caller
        # got no answer and nothing was written)
        if snap.next and (snap.values or {}).get("trace_id") == tid:
            unfinished.append(tid)
    outcome.update(live=len(live), missing=missing, sql_relations=len(sql_rel), graph_relations=len(graph_rel),
                   relations_equal=sql_rel == graph_rel, outbox=[(j["kind"], j["error"]) for j in s.sql.pending_projections()],
                   unfinished=unfinished, entities=len(s.sql.list_entities(None)))
    m.close()
    print("OUTCOME " + json.dumps(outcome))
''')


def _seeds() -> list[int]:
    return [int(x) for x in os.environ.get("MEMORYX_TEST_CRASH_SEEDS", "1").split(",") if x.strip()]


def test_kill_points_cover_nodes_and_store_writes():
    assert len(KILL_POINTS) == 31
    assert {"after:SQLStore.delete_memory", "before:VectorStore.delete_memories"} <= set(KILL_POINTS)
    assert len(set(KILL_POINTS)) == len(KILL_POINTS)


@pytest.mark.parametrize("seed", _seeds())
def test_stores_converge_after_kill_9_at_every_point(tmp_path, seed):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    env = {k: v for k, v in env.items() if not k.startswith("MEMORYX_") or k.startswith("MEMORYX_TEST_")}
    proc = subprocess.run(
        [sys.executable, "-c", ZYGOTE, str(tmp_path / "data"), str(seed), json.dumps(KILL_POINTS),
         json.dumps(STORE_POINTS)],
        capture_output=True, text=True, timeout=600, env=env, start_new_session=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("OUTCOME ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    out = json.loads(lines[-1][len("OUTCOME "):])
    print(f"seed {seed}: {json.dumps(out)}")
    assert not out.get("errors"), out
    # every point was really reached (the add that arms a point hits it), the delete path's included
    assert out["not_reached"] == [] and sorted(out["killed"]) == sorted(KILL_POINTS), out
    assert out["live"] > 0 and out["missing"] == [], out  # every live memory is visible to search
    assert out["relations_equal"] and out["sql_relations"] > 0, out  # graph relations == SQL's
    assert out["outbox"] == [] and out["unfinished"] == [], out
