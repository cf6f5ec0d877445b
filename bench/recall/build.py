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


def _memory(set_name: str, set_dir: Path):
    from memoryx import Memory

    return Memory(settings_for(set_name, set_dir), llm="offline")


def _check(results: list[dict]) -> None:
    failed = [r["error"] for r in results if r.get("error")]
    if failed:
        raise RuntimeError(f"{len(failed)} adds failed, first: {failed[0]}")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(set_name: str, set_dir: Path, questions: int | None = None, fresh: bool = False) -> dict:
    """Ingest `set_name` into `set_dir` unless it is kept there already; returns store.json's content."""
    set_dir = Path(set_dir)
    if is_kept(set_dir) and not fresh:
        return json.loads((set_dir / "store.json").read_text())
    if set_dir.exists():
        shutil.rmtree(set_dir)
    set_dir.mkdir(parents=True)
    t0 = time.perf_counter()
    builder = {"locomo-dev": _locomo, "lme-dev": _lme, "lme-val": _lme, "lives": _lives}[set_name]
    m = _memory(set_name, set_dir)
    try:
        qs, units, info = builder(m, set_name, questions)
    finally:
        m.close()
    (set_dir / "units.json").write_text(json.dumps(units))
    write_questions(set_dir, qs)
    info = {"ingest_s": round(time.perf_counter() - t0, 1), "questions": len(qs), **info}
    mark(set_dir, set_name, **info)
    _log(f"{set_name}: ingested in {info['ingest_s']} s ({info})")
    return json.loads((set_dir / "store.json").read_text())


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


def _lme(m, set_name: str, limit: int | None):
    data = sets.spread(sets.read_lme(set_name), limit)
    split = set_name.split("-")[1]
    units: dict[str, str] = {}
    out = []
    t0 = time.perf_counter()
    n_turns = 0
    for j, q in enumerate(data, 1):
        items = sets.lme_items(q)
        _check(m.add_many(items, infer=False))
        n_turns += len(items)
        user = f"lme-{q['question_id']}"
        ev_turns, ev_sessions = sets.lme_evidence(q)
        gold = []
        for mem in m.get_all(user_id=user, limit=ALL_MEMORIES)["results"]:
            meta = mem.get("metadata") or {}
            unit = sets.turn_id(meta["session"], meta["turn"])
            units[mem["id"]] = unit
            if unit in ev_turns:
                gold.append(mem["id"])
        out.append({"set": set_name, "split": split, "qid": q["question_id"], "qtype": q["question_type"],
                    "query": q["question"], "user_id": user, "group_id": None,
                    "now": sets.parse_date(q["question_date"]).isoformat(), "gold_ids": sorted(gold),
                    "gold_units": sorted(ev_turns), "gold_sessions": sorted(ev_sessions),
                    "n_turns": len(sets.lme_docs(q)), "n_sessions": len(q["haystack_session_ids"])})
        _log(f"  {set_name} {j}/{len(data)}: {n_turns} turns, {time.perf_counter() - t0:.0f} s")
    return out, units, {"turns": n_turns, "memories": len(units)}


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
                            "life": life["name"], "blind": life["blind"], "infer": not raw})
    out = out if not limit else sets.spread(out, limit)
    return out, {}, {"statements": sum(len(x["statements"]) for x in lives), **timings}
