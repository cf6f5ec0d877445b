"""expand_context: the SQL rows of the fused candidates (scope, liveness and filters re-checked on the system
of record), the time / "when" / figure / relation boosts, then neighbouring-memory propagation (memoryx.search.tuning
explains each knob). The kept candidates carry their latest feedback ("feedback", read by the statement that
reads their rows; finalize demotes VERY_NEGATIVE ones, memoryx.lifecycle.feedback). A stage of the rank node
(nodes/rank.py), after fuse.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memoryx.core.filters import matches, walk
from memoryx.core.runs import elapsed_ms
from memoryx.runtime.context import Context, services_of
from memoryx.search.amounts import states_amount
from memoryx.search.current import ends_relation, ends_topic
from memoryx.search.dates import states_time
from memoryx.search.plan import SearchPlan
from memoryx.search.preferences import states_food, states_preference
from memoryx.search.reads import context_rows, memory_dicts
from memoryx.search.relations import (
    about_person,
    about_someone_else,
    gives_name,
    opens_on_someone,
    people_of,
    says_attribute,
    states_relation,
)
from memoryx.search.scoring import epoch_of, event_time
from memoryx.search.speakers import said_by
from memoryx.search.state import RankState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)

FETCH_SLACK = 5  # rows read beyond `keep`, for those a filter turns away


def neighbours(rows: list, seed_ids: list[str], *, window: int, max_gap_s: float) -> dict[str, list[tuple[int, str]]]:
    """[(distance, id)] of the memories stored just before / after each seed, from `rows` (memoryx.search.reads
    RowTimes, oldest first, complete within max_gap_s of each seed), at most `window` on each side and
    `max_gap_s` away."""
    pos = {r.id: i for i, r in enumerate(rows)}
    times = [r.created for r in rows]
    # the event time too: a replayed chat log written in one go keeps its sessions apart
    events = [r.event for r in rows]
    out: dict[str, list[tuple[int, str]]] = {}
    for sid in seed_ids:
        i = pos.get(sid)
        if i is None:
            continue
        found: list[tuple[int, str]] = []
        for step in (-1, 1):
            j, dist = i + step, 1
            while (0 <= j < len(rows) and dist <= window and abs(times[j] - times[i]) <= max_gap_s
                   and abs(events[j] - events[i]) <= max_gap_s):
                found.append((dist, rows[j].id))
                j += step
                dist += 1
        out[sid] = found
    return out


def _from_payload(mid: str, payload: dict) -> dict:
    """A memory dict from a vector-store payload (the SQL row replaces it before the final ranking)."""
    mem = {"id": mid, "memory": payload.get("text") or "", "metadata": payload.get("metadata") or {},
           "created_at": payload.get("created_at"), "updated_at": payload.get("updated_at"),
           "valid_at": payload.get("valid_at"),
           "memory_type": payload.get("memory_type"), "category": payload.get("category"),
           "importance": payload.get("importance"), "hash": payload.get("hash")}
    for k in ("user_id", "agent_id", "run_id", "group_id"):
        mem[k] = payload.get(k)
    return mem


def _boost(cands: list[dict], plan: SearchPlan, named: set[str]) -> None:
    """Add the time / "when" / figure / relation bonuses to the candidates' relevance (those with a payload)."""
    t = plan.tuning
    window = plan.time_window
    for c in cands:
        mem = c["memory"]
        if mem is None:
            continue
        text = mem.get("memory") or ""
        if window:
            ts = event_time(mem)
            if ts is not None and window[0] <= ts < window[1]:
                _signal(c, "in_period", t.time_bonus)
        # a "when" question, or one naming a period ("a month ago"): the memory that says when (its "today",
        # "on March 7th") is the event's own account, its neighbours in the same period only share the date
        if (plan.asks_when or window) and states_time(text):
            _signal(c, "when_time", t.when_bonus)
        # "how much": the memory giving a figure, said by the side the question asks about ("how much did I
        # spend": the user's own figure, not the assistant's worked examples)
        if plan.amount and not (plan.role and _other_side(mem, plan.role)) and states_amount(text):
            _signal(c, "amount", t.amount_bonus)
        # the user's own preferences, unless the question names one of their people ("a gift for my daughter")
        # (about food: what they eat or cannot, "I don't eat pork", "I have coeliac disease", not their favourite
        # author)
        if plan.food:
            if states_food(text) and not opens_on_someone(text):
                _signal(c, "preference", t.preference_bonus)
        elif plan.preferences and states_preference(text, own=not plan.people_asked):
            _signal(c, "preference", t.preference_bonus)
        if plan.role is not None and said_by(mem, plan.role):
            _signal(c, "role", t.role_bonus)
    # the memory states the relation the question names (memoryx.search.relations): a relation the graph walk
    # found, or, for a question about the user, the text's own possessive ("User's dog ...")
    # - unless it says the relation ended ("I quit my job") and the question asks what it is now
    tokens, cjk = (set(plan.relation_tokens), set(plan.relation_cjk)) if plan.role == "user" else (set(), set())
    # asked something of one of the user's people ("where does my grandmother live"), the user's own home or job
    # is not it: the person is the relation stated, what is asked of them gains `attribute_bonus`
    # (the relation's tokens hold its short CJK words too: "住" is what is asked of them, not who)
    attribute_tokens, attribute_cjk = set(plan.attribute_tokens), set(plan.attribute_cjk)
    tokens, cjk = tokens - attribute_tokens - attribute_cjk, cjk - attribute_cjk
    # the person the relation is ("my husband": Karim, as a memory names him): what is said of them states it too
    people = people_of([(c["memory"] or {}).get("memory") or "" for c in cands], tokens, cjk) if tokens or cjk \
        else set()
    asked_of_person = plan.people_asked and bool(attribute_tokens or attribute_cjk) and bool(tokens or cjk)
    for c in cands:
        mem = c["memory"]
        text = (mem or {}).get("memory") or ""
        if plan.current_value:  # (ended as the relation asked about: another clause may state it anew)
            c["ended"] = ends_relation(text, (lambda clause: states_relation(clause, tokens, cjk)) if tokens or cjk
                                       else None)
            if c["ended"]:
                continue
        # asked the user's own relation ("where do I live"), a statement of one of their people ("My dad lives in
        # Kyoto") answers for that person: it is not the user's, however many words it shares with the question
        if (tokens or cjk) and not plan.people_asked and c["id"] not in named \
                and about_someone_else(text):
            _signal(c, "someone_else", -t.relation_bonus)
            continue
        person = about_person(text, people) if people and mem is not None else None
        # asked something of one of the user's people ("where does my mother live"), the user's own statement of it
        # ("I live in Berlin") is not theirs
        if asked_of_person and not person and c["id"] not in named and mem is not None \
                and states_relation(text, attribute_tokens, attribute_cjk) and not states_relation(text, tokens, cjk):
            _signal(c, "own_not_theirs", -t.relation_bonus)
            continue
        # asked whether something still holds, a memory saying it ended ("No more gym for me") states it too
        ended_asked = plan.still and mem is not None and ends_topic(text, plan.query)
        if c["id"] in named or ended_asked or ((tokens or cjk) and mem is not None
                                               and (person or states_relation(text, tokens, cjk))):
            _signal(c, "relation", t.relation_bonus)
            if plan.asks_name and gives_name(text, tokens):
                _signal(c, "naming", t.naming_bonus)
            if says_attribute(text, plan.attribute_tokens, plan.attribute_cjk):
                _signal(c, "attribute", t.attribute_bonus)
            c["states_relation"] = True  # a statement of it: the latest one may be how it stands (search/current.py)


def _signal(c: dict, signal: str, weight: float, value: float = 1.0) -> None:
    """Add weight x value to the candidate's relevance (the hand-weighted order of the pool) and record the signal's
    value, which the fitted ranking reads (memoryx.search.ranker)."""
    c["relevance"] += weight * value
    sig = c.setdefault("signals", {})
    sig[signal] = sig.get(signal, 0.0) + value


def _other_side(memory: dict, role: str) -> bool:
    """A chat turn (metadata.role set) of the side `role` is not."""
    said = (memory.get("metadata") or {}).get("role")
    return bool(said) and said != role


_ABSENT = object()
# the values a key may hold (object: _ABSENT): equal ones of the same class filter alike
_SCALARS = frozenset({str, int, float, bool, type(None), object})


def _field_reader(field: str):
    """What `matches` reads of a memory dict for `field` (memoryx.core.filters: a dotted path into the metadata,
    else the top-level value, a time then read as epoch seconds), as it is stored; _ABSENT where it is not."""
    if not field.startswith("metadata."):
        return lambda mem: mem.get(field, _ABSENT)
    path = field[len("metadata."):].split(".")

    def read(mem: dict):
        cur = mem.get("metadata") or {}
        for part in path:
            if not isinstance(cur, dict) or part not in cur:
                return _ABSENT
            cur = cur[part]
        return cur

    return read


def _filter_test(node):
    """`matches(node, mem)` as a function of one memory dict. A filter gives the same answer for the same values
    of the fields it reads (top-level ones or metadata paths), so the answer is kept per tuple of values: the
    ~80 rows of a search share one or two statuses and no expiry, and each walk of the tree costs ~10 us.
    Values that are not scalars (a list, a dict) walk the tree every time."""
    if node is None:
        return lambda mem: True
    readers = tuple(_field_reader(f) for f in dict.fromkeys(c.field for c in walk(node)))
    known: dict[tuple, bool] = {}

    def test(mem: dict) -> bool:
        values = [read(mem) for read in readers]
        if any(v.__class__ not in _SCALARS for v in values):
            return matches(node, mem)
        key = tuple((v.__class__, v) for v in values)  # the class too: True == 1 as a key, not for the filter
        hit = known.get(key)
        if hit is None:
            hit = known[key] = matches(node, mem)
        return hit

    return test


class _NoContext(Exception):
    """The context read failed (its cause attached): the search goes on without propagation."""


def _kept(sql, plan: SearchPlan, rows: list, seeds: list[dict], by_id: dict[str, dict], keep: int,
          penalty: float, alone_chars: int = 0) -> list[dict]:
    """Context propagation from `seeds` over `rows` (memoryx.search.reads RowTimes: live, in the scope), then
    the best `keep` candidates whose SQL rows pass the scope and the filters (read whole in batches, usually
    one), with their latest feedback when a penalty applies (finalize demotes VERY_NEGATIVE ones). A memory at
    least `alone_chars` long (0: none) borrows no context."""
    t = plan.tuning
    weight, win = float(t.context_weight), int(t.context_window)
    gap = float(t.context_max_gap_minutes) * 60.0
    types = set(t.context_types or ())
    live = {r.id for r in rows}  # live and in the scope
    passes = _filter_test(plan.filters)
    if seeds:
        turns = [r for r in rows if not types or r.memory_type in types]
        adj = neighbours(turns, [c["id"] for c in seeds], window=win, max_gap_s=gap)
        loans: dict[str, float] = {}
        for seed in seeds:
            for dist, mid in adj.get(seed["id"], []):
                loan = weight * seed["relevance"] * float(t.context_decay) ** (dist - 1)
                if loan > loans.get(mid, 0.0):
                    loans[mid] = loan
        # a question about one side of a chat ("what did I ...") is answered by that side's turns: the other
        # side's turns (the assistant's long replies) neither lend (expand_context leaves them out of the seeds)
        # nor borrow, or one conversation's turns, pulled up by each other, crowd the top k
        other_side = plan.role if t.context_role and plan.role is not None else None
        for mid, loan in loans.items():
            c = by_id.get(mid)
            if c is None:  # found only through its neighbour
                c = by_id[mid] = {"id": mid, "relevance": 0.0, "sources": [], "path_scores": {}, "path_ranks": {},
                                  "path_norm": {}, "memory": None}
            elif other_side is not None and c["memory"] is not None and _other_side(c["memory"], other_side):
                continue
            elif alone_chars and c["memory"] is not None and len(c["memory"].get("memory") or "") >= alone_chars:
                # a long turn says what it says: a short one ("Yes, it was great!") is answered by its
                # neighbours, a long one borrowing from them only crowds its conversation into the top k
                continue
            c["relevance"] += loan
            c["sources"].append("context")
            c.setdefault("signals", {})["context"] = loan / weight if weight > 0 else 0.0

    # The system of record decides liveness, scope, filters and access counts of everything returned.
    order = [c for c in sorted(by_id.values(), key=lambda x: -x["relevance"]) if c["id"] in live]
    out: list[dict] = []
    feedback: dict[str, str | None] | None = {} if penalty > 0 else None  # read with the rows (same statement)
    i = 0
    while len(out) < keep and i < len(order):
        batch = order[i: i + keep - len(out) + FETCH_SLACK]
        i += len(batch)
        truth = memory_dicts(sql, [c["id"] for c in batch], feedback=feedback)
        for c in batch:
            mem = truth.get(c["id"])
            if mem is None or not plan.scope.contains(mem) or not passes(mem):
                continue  # deleted since it was projected, outside the scope, or failing the filters
            c["memory"] = mem
            out.append(c)
            if len(out) >= keep:
                break
    if feedback:
        for c in out:
            if c["id"] in feedback:
                c["feedback"] = feedback[c["id"]]
    return out


def expand_context(state: RankState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    sql = services_of(runtime).sql
    t = plan.tuning
    limit = plan.limit
    fused = state.get("fused") or []
    pool = [dict(c, sources=list(c["sources"])) for c in fused[: max(4 * t.candidate_k, 4 * limit)]]

    # memory dicts from the vector payloads (dense/keyword hits; filters were pushed down there). Hits of the
    # graph path alone carry no payload: their SQL rows come with the final fetch (filters checked there).
    cands: list[dict] = []
    for c in pool:
        payload = c.pop("payload", None)
        c["memory"] = _from_payload(c["id"], payload) if payload else None
        cands.append(c)
    _boost(cands, plan, set(state.get("relation_hits") or ()))

    # context propagation over the rows' times (one light statement), then the kept rows read whole -------
    # The system of record decides liveness, scope, filters and access counts of everything returned.
    by_id = {c["id"]: c for c in cands}
    cands.sort(key=lambda x: -x["relevance"])
    keep = max(3 * limit, 30, t.rerank_top if plan.reranker else 0)
    weight, win = float(t.context_weight), int(t.context_window)
    if plan.aggregate and not t.context_aggregate:
        # "how many ...", "in total", "between X and Y": each part of the answer is its own event, told in its own
        # conversation; a hit's neighbours are more of the same conversation, crowding the other events out
        weight = 0.0
    gap = float(t.context_max_gap_minutes) * 60.0
    types = set(t.context_types or ())
    seeds = [c for c in cands[: t.context_seeds]
             if c["memory"] is not None and (not types or c["memory"].get("memory_type") in types)] \
        if weight > 0 and win > 0 else []
    if t.context_role and plan.role is not None:  # the other side's turns lend nothing either (_kept)
        seeds = [c for c in seeds if not _other_side(c["memory"], plan.role)]
    seed_times = [ts for ts in (epoch_of(c["memory"].get("created_at")) for c in seeds) if ts is not None]
    ids = [c["id"] for c in cands[:keep]]
    penalty = services_of(runtime).settings.feedback_very_negative_penalty
    # a long chat turn stands alone: it borrows no context
    alone = int(t.alone_chars)
    # the rows' times: from the scope's timeline analyze_query read (memoryx.search.reads), else read here. The
    # rows' times, the kept rows whole and their feedback: ONE read transaction (each costs a session and a
    # BEGIN). A failing context read leaves the search with plain rows and no propagation, read in a fresh
    # transaction (on PostgreSQL a failed statement spoils the one it ran in); nothing is changed before it.
    rows = plan.timeline.window(ids, seed_times, max_gap_s=gap) if plan.timeline is not None else None
    try:
        with sql.transaction(write=False):
            if rows is None:
                try:
                    rows = context_rows(sql, plan.scope, ids, seed_times, max_gap_s=gap)
                except Exception as exc:
                    raise _NoContext() from exc
            out = _kept(sql, plan, rows, seeds, by_id, keep, penalty, alone)
    except _NoContext as failed:  # never fail a search on the context step
        log.warning("context expansion failed: %s", failed.__cause__)
        with sql.transaction(write=False):
            out = _kept(sql, plan, context_rows(sql, plan.scope, ids, [], max_gap_s=gap), [], by_id, keep, penalty)
    top = out[0]["relevance"] if out else 0.0
    for c in out:
        c["relevance"] = c["relevance"] / top if top > 0 else 0.0
    return {"candidates": out, "timings": {"expand_context": elapsed_ms(start)}}
