"""Ingest one set of the recall harness into its directory through the public API, and write its questions with
their gold memory ids (stores.py opens and reads the result).

LoCoMo and LongMemEval: `Memory.add_many(items, infer=False)`, one memory per turn (a turn longer than
max_message_chars: one per chunk), metadata naming dia_id or session/turn. The lives: each statement (with the
assistant's replies) one item of `Memory.add_many` with extraction on (infer=True, offline model) under the user
"life-<name>", and again as said (infer=False) under "life-<name>-raw".

Gold ids are read back from the stored memories (Memory.get_all): a memory is evidence when its metadata names an
evidence turn (LoCoMo, LongMemEval) or its text holds every expected word (lives). `units.json` maps each memory
id to its turn (LoCoMo dia_id, LongMemEval "<session>_<turn+1>") for scoring.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import everyday
import sets
from stores import is_kept, mark, settings_for, write_questions

ALL_MEMORIES = 1_000_000


EMBED_CACHE: Path | None = None  # run.py --embed-cache: document vectors kept on disk between ingests


def _memory(set_name: str, set_dir: Path):
    """The Memory an ingest writes through: the defaults, or with --embed-cache the same encoder's document
    vectors read from disk when a text was embedded by an earlier ingest (a re-ingest after an index change
    then pays SQL and the keyword index, not the encoder; not for the ingest times of record)."""
    from memoryx import Memory

    settings = settings_for(set_name, set_dir)
    if EMBED_CACHE is None:
        return Memory(settings, llm="offline")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the cache's module
    from embedding_cache import CachedEmbeddings

    from memoryx.models.embeddings import make_embeddings

    return Memory(settings, llm="offline",
                  embeddings=CachedEmbeddings(make_embeddings(settings), EMBED_CACHE, name="recall-docs"))


def _check(results: list[dict]) -> None:
    failed = [r["error"] for r in results if r.get("error")]
    if failed:
        raise RuntimeError(f"{len(failed)} adds failed, first: {failed[0]}")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(set_name: str, set_dir: Path, questions: int | None = None, fresh: bool = False) -> dict:
    """Ingest `set_name` into `set_dir` unless it is kept there already; returns store.json's content.
    LongMemEval is ingested a question at a time, each one's line written as soon as it is in: a kept store
    with fewer questions than asked gets the missing ones, and a store still being filled can be read."""
    set_dir = Path(set_dir)
    if fresh and set_dir.exists():
        shutil.rmtree(set_dir)
    if set_name.startswith("lme-"):
        return _build_lme(set_name, set_dir, questions)
    if is_kept(set_dir):
        return json.loads((set_dir / "store.json").read_text())
    if set_dir.exists():
        shutil.rmtree(set_dir)
    set_dir.mkdir(parents=True)
    t0 = time.perf_counter()
    builder = {"locomo-dev": _locomo, "lives": _lives}[set_name]
    m = _memory(set_name, set_dir)
    try:
        qs, units, info = builder(m, set_name, questions)
    finally:
        m.close()
    with (set_dir / "units.jsonl").open("w") as f:
        f.write(json.dumps(units) + "\n")
    write_questions(set_dir, qs)
    info = {"ingest_s": round(time.perf_counter() - t0, 1), "questions": len(qs), **info,
            "embed_cache": EMBED_CACHE is not None}
    mark(set_dir, set_name, **info)
    _log(f"{set_name}: ingested in {info['ingest_s']} s ({info})")
    return json.loads((set_dir / "store.json").read_text())


def load_units(set_dir: Path) -> dict[str, str]:
    """memory id -> its turn (LoCoMo dia_id, LongMemEval "<session>_<turn+1>") of every memory ingested."""
    out: dict[str, str] = {}
    path = Path(set_dir) / "units.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                out.update(json.loads(line))
    return out


def _locomo(m, set_name: str, limit: int | None):
    items, questions = sets.locomo()
    questions = sets.spread(questions, limit)
    t0 = time.perf_counter()
    _check(m.add_many(items, infer=False))
    added = time.perf_counter() - t0
    units: dict[str, str] = {}
    by_dia: dict[tuple[str, str], list[str]] = {}
    for group in sorted({it["group_id"] for it in items}):
        for mem in m.get_all(group_id=group, limit=ALL_MEMORIES)["results"]:
            units[mem["id"]] = (mem.get("metadata") or {}).get("dia_id")
            by_dia.setdefault((group, units[mem["id"]]), []).append(mem["id"])
    out = []
    for q in questions:
        gold = sorted({i for e in q["evidence"] for i in by_dia.get((q["group_id"], e), [])})
        out.append({"set": set_name, "split": "dev", "qid": q["qid"], "qtype": q["qtype"], "query": q["query"],
                    "user_id": None, "group_id": q["group_id"], "now": None, "gold_ids": gold,
                    "gold_units": q["evidence"]})
    return out, units, {"turns": len(items), "memories": len(units), "add_s": round(added, 1)}


def _build_lme(set_name: str, set_dir: Path, limit: int | None) -> dict:
    data = sets.spread(sets.read_lme(set_name), limit)
    set_dir.mkdir(parents=True, exist_ok=True)
    qfile = set_dir / "questions.jsonl"
    done = {json.loads(x)["qid"] for x in qfile.read_text().splitlines() if x.strip()} if qfile.exists() else set()
    todo = [q for q in data if q["question_id"] not in done]
    meta = json.loads((set_dir / "store.json").read_text()) if (set_dir / "store.json").exists() else {}
    if not todo:
        return meta
    held = meta.get("roles", ["user", "assistant"]) if meta else list(sets.LME_ROLES)
    if held != list(sets.LME_ROLES):
        raise SystemExit(f"{set_dir} holds the turns of {held}, not of "
                         f"{list(sets.LME_ROLES)}: give --lme-turns to match, or another --stores")
    split = set_name.split("-")[1]
    t0 = time.perf_counter()
    spent = meta.get("ingest_s", 0.0)
    n_turns = meta.get("turns", 0)
    m = _memory(set_name, set_dir)
    try:
        for j, q in enumerate(todo, 1):
            items = sets.lme_items(q)
            _check(m.add_many(items, infer=False))
            n_turns += len(items)
            user = f"lme-{q['question_id']}"
            ev_turns, ev_sessions = sets.lme_evidence(q)
            units, gold = {}, []
            for mem in m.get_all(user_id=user, limit=ALL_MEMORIES)["results"]:
                meta_ = mem.get("metadata") or {}
                units[mem["id"]] = sets.turn_id(meta_["session"], meta_["turn"])
                if units[mem["id"]] in ev_turns:
                    gold.append(mem["id"])
            line = {"set": set_name, "split": split, "qid": q["question_id"], "qtype": q["question_type"],
                    "query": q["question"], "user_id": user, "group_id": None,
                    "now": sets.parse_date(q["question_date"]).isoformat(), "gold_ids": sorted(gold),
                    "gold_units": sorted(ev_turns), "gold_sessions": sorted(ev_sessions),
                    "n_turns": len(sets.lme_docs(q)), "n_sessions": len(q["haystack_session_ids"])}
            with (set_dir / "units.jsonl").open("a") as f:
                f.write(json.dumps(units) + "\n")
            with qfile.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
            done.add(q["question_id"])
            elapsed = time.perf_counter() - t0
            mark(set_dir, set_name, ingest_s=round(spent + elapsed, 1), questions=len(done), turns=n_turns,
                 roles=list(sets.LME_ROLES),
                 embed_cache=bool(meta.get("embed_cache")) or EMBED_CACHE is not None)
            _log(f"  {set_name} {j}/{len(todo)}: {n_turns} turns in the store, {elapsed:.0f} s")
    finally:
        m.close()
    return json.loads((set_dir / "store.json").read_text())


def _lives(m, set_name: str, limit: int | None):
    lives = everyday.load_lives()
    timings = {}
    for raw in (True, False):
        items = [{"messages": msgs, "user_id": everyday.user_of(life, raw)} for life in lives
                 for _, msgs in everyday.turns(life)]
        t0 = time.perf_counter()
        _check(m.add_many(items, infer=not raw))
        timings["raw_s" if raw else "inferred_s"] = round(time.perf_counter() - t0, 1)
        _log(f"  lives {'as said' if raw else 'inferred'}: {len(items)} statements, {timings}")
    out = []
    for life in lives:
        for raw in (False, True):
            user = everyday.user_of(life, raw)
            mems = m.get_all(user_id=user, limit=ALL_MEMORIES)["results"]
            for n, q in enumerate(life["questions"]):
                out.append({"set": set_name, "split": "dev", "qid": f"{life['name']}-q{n}" + ("-raw" if raw else ""),
                            "qtype": q["kind"], "query": q["question"], "user_id": user, "group_id": None,
                            "now": life["now"], "gold_ids": sorted(x["id"] for x in mems
                                                                   if everyday.holds(x["memory"], q["expected"])),
                            "expected": q["expected"], "language": q["language"], "kind": q["kind"],
                            "life": life["name"], "blind": life["blind"], "written": life.get("written"),
                            "infer": not raw})
    out = out if not limit else sets.spread(out, limit)
    return out, {}, {"statements": sum(len(x["statements"]) for x in lives), **timings}
