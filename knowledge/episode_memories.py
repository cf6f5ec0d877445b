"""Episode memories of a conversation (MEMORYX_EPISODES, off by default): written as the add graph's
build_episodes step records turns, closed by the end of a run or a maintenance tick.

Units are cut across add calls (a chat replayed one turn per add, as chatbots and LoCoMo's bench send it): the
open unit of a conversation (exactly the add's scope: user / agent / run / group) is its newest episode with
metadata.open, holding the unit's turns (metadata.turns, capped). Each add cuts its messages after that unit's
turns by the rules of memoryx.knowledge.episodes (a time gap longer than MEMORYX_EPISODE_GAP_S, a topic marker, a
similarity drop against the unit's last turns; with MEMORYX_EPISODE_SEGMENTER=model the model names the cuts
among the new turns): the turns that continue the unit rewrite its episode, each further unit gets a new one,
and the last unit stays open. So there is one episode per unit, searchable from its first turn on.

Why rewritten while open (and not written when the unit closes): a user expects the conversation going on
now to be in get_context and search at once, not after a gap is noticed. An open episode's narrative is the
deterministic summary (offline_narratives: no model call per turn); when the unit closes (the next add after
a gap or a shift, `flush_episodes` at the end of a run, or `close_idle_episodes` on a maintenance tick) the
model writes its final narrative, once per unit. Episode memories: memory_type "episodic", category "episode",
valid_at = the unit's start, metadata {"episode": true, "open", "participants", "start", "end", "narratives",
"title", "fact_ids", "messages", "turns", "traces"}; `fact_ids` are the memories the unit's adds added or
updated (with several units in one add, each fact goes to the unit sharing most words with it).

The open unit is read and rewritten under the scope lock. A run replayed after a crash (its trace id in the
episode's traces) adds no turn twice; new episodes have deterministic ids (trace id / unit index). A model
failure falls back to the deterministic narrative; an episode never fails an add.
"""

from __future__ import annotations

import logging
import time

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.core.runs import deterministic_id
from memoryx.core.scope import Scope
from memoryx.core.text import tokenize
from memoryx.knowledge.episodes import (
    EPISODE_CATEGORY,
    MAX_NARRATIVE_CHARS,
    MemUnit,
    cap_turns,
    cut_points,
    episode_text,
    offline_narratives,
    parse_transcript,
    unit_of_turns,
    unit_transcript,
    units_from_cuts,
)
from memoryx.knowledge.perspectives import write_perspectives
from memoryx.models.llm_io import RetriesExhausted, extract_json, message_text
from memoryx.models.step_calls import ask_or_fall_back, run_options
from memoryx.prompts.episodes import (
    EPISODE_PROMPT,
    RETRY_EPISODE_PROMPT,
    RETRY_SEGMENT_PROMPT,
    SEGMENT_PROMPT,
    EpisodeAnswer,
    SegmentAnswer,
)

log = logging.getLogger(__name__)


def _call(services, state: dict, step: str, system: str, human: str, parse, retry: str):
    llm = services.extraction_llm
    reply = ask_or_fall_back(llm, [SystemMessage(content=system), HumanMessage(content=human)], parse, step=step,
                             retry_prompt=retry, fallback="fell back to the rules", trace_id=state.get("trace_id"),
                             **run_options(llm, state, step, services.settings))
    return None if isinstance(reply, RetriesExhausted) else reply.value


def _cuts(services, state: dict, open_turns: list[dict], new: list[dict]) -> tuple[list[int], int]:
    """Cut points over the open unit's turns + this add's (only at or after the new turns: the past is not
    re-cut), and the model calls spent. The time of a turn without a timestamp is the time of its add."""
    s = services.settings
    combined = open_turns + new
    timed = [{**t, "timestamp": t["at"]} for t in combined]
    vectors = None
    if s.episode_topic_threshold > -1:  # the open unit's last turns stand for its topic (one embedding call)
        tail = open_turns[-3:]
        embedded = services.embeddings.embed_documents([t["content"] for t in tail + new])
        vectors = [None] * (len(open_turns) - len(tail)) + [list(v) for v in embedded]
    cuts = cut_points(timed, vectors, gap_s=s.episode_gap_s, threshold=s.episode_topic_threshold)
    calls = 0
    if s.episode_segmenter == "model" and len(new) >= 3:
        numbered = "\n".join(f"{i}. {m['content']}" for i, m in enumerate(new))
        answer = _call(services, state, "segment_episodes", SEGMENT_PROMPT, numbered,
                       lambda a: SegmentAnswer.model_validate(extract_json(message_text(a))), RETRY_SEGMENT_PROMPT)
        calls = 1
        if answer is not None:  # the time gaps and the boundary with the open unit stay the rules'
            gaps = cut_points(timed, None, gap_s=s.episode_gap_s, threshold=-1)
            boundary = [len(open_turns)] if len(open_turns) in cuts else []
            cuts = gaps + boundary + [len(open_turns) + c for c in answer.cuts if 0 < c < len(new)]
    return sorted({0} | {c for c in cuts if c >= len(open_turns)}), calls


def _narratives(services, state: dict, unit: MemUnit) -> tuple[str | None, dict[str, str]]:
    transcript = unit_transcript(unit)
    answer = _call(services, state, "summarize_episode", EPISODE_PROMPT, transcript,
                   lambda a: EpisodeAnswer.model_validate(extract_json(message_text(a))), RETRY_EPISODE_PROMPT)
    if answer is None:
        return None, offline_narratives(parse_transcript(transcript))
    return answer.title, answer.narratives


def _assign_facts(units: list[MemUnit], facts: list[dict]) -> list[list[str]]:
    """Memory ids per unit: each fact goes to the unit sharing most words with it (the last on a tie or none)."""
    out: list[list[str]] = [[] for _ in units]
    words = [set(tokenize(u.text)) for u in units]
    for f in facts:
        toks = set(tokenize(f.get("memory") or ""))
        best = max(range(len(units)), key=lambda i: (len(toks & words[i]), i)) if units else None
        if best is not None:
            out[best].append(f["id"])
    return out


def open_episode(sql, scope) -> dict | None:
    """The open episode of this conversation (exactly this scope: user / agent / run / group), if any."""
    for row in sql.list_memories(scope, limit=20, categories=[EPISODE_CATEGORY]):
        if (row.get("metadata") or {}).get("open") and all(row.get(k) == v for k, v in scope_fields(scope).items()):
            return row
    return None


def scope_fields(scope) -> dict:
    return {k: getattr(scope, k) for k in ("user_id", "agent_id", "run_id", "group_id")}


def _episode(services, state: dict, unit: MemUnit, *, final: bool) -> tuple[str, str | None, dict[str, str], int]:
    """(text, title, narratives, model calls) of a unit: a closed unit is summarised by the model (once per
    unit); an open one by the deterministic summary, rewritten as it grows (no model call per turn)."""
    calls = 0
    if final:
        title, narratives = _narratives(services, state, unit)
        calls = 1
    else:
        title, narratives = None, offline_narratives(parse_transcript(unit_transcript(unit)))
    text = episode_text(narratives, unit.start, unit.end, title)
    if not text:  # a model answer of blank narratives: the deterministic summary stands in
        narratives = offline_narratives(parse_transcript(unit_transcript(unit)))
        text = episode_text(narratives, unit.start, unit.end, title) or unit_transcript(unit)[:MAX_NARRATIVE_CHARS]
    return text, title, narratives, calls


def _meta(base: dict, unit: MemUnit, turns: list[dict], *, title, narratives, fact_ids, messages: int, traces,
          is_open: bool) -> dict:
    return {**base, "episode": True, "open": is_open, "participants": unit.participants, "start": unit.start,
            "end": unit.end, "narratives": narratives, "title": title, "fact_ids": fact_ids, "messages": messages,
            "turns": cap_turns(turns), "traces": list(traces)[-20:]}


def close_episode(services, row: dict, *, trace_id: str | None = None, written: list | None = None) -> tuple[dict, int]:
    """Close an open episode: its final narrative (the model's, once) and open = False, and the final
    episode of each participant of a group unit (memoryx.knowledge.perspectives, appended to `written`).
    Returns (row, calls)."""
    meta = dict(row.get("metadata") or {})
    turns = list(meta.get("turns") or [])
    unit = unit_of_turns(turns)
    state = {"trace_id": trace_id or row.get("trace_id"), "user_id": row.get("user_id")}
    text, title, narratives, calls = _episode(services, state, unit, final=True)
    meta.update(open=False, title=title, narratives=narratives)
    updated = services.sql.update_memory(row["id"], text=text, metadata=meta, trace_id=trace_id)
    services.projector.sync_memories([row["id"]])
    perspectives, more = write_perspectives(services, updated, final=True, trace_id=trace_id)
    if written is not None:
        written.extend(perspectives)
    return updated, calls + more


def flush_episodes(services, scope, *, trace_id: str | None = None) -> list[str]:
    """Close the open episodes within `scope` (Memory.end_run, a maintenance tick): ids closed."""
    closed = []
    with services.sql.scope_lock(scope):
        for row in services.sql.list_memories(scope, limit=None, categories=[EPISODE_CATEGORY]):
            if (row.get("metadata") or {}).get("open"):
                close_episode(services, row, trace_id=trace_id)
                closed.append(row["id"])
    return closed


def close_idle_episodes(services, *, now: float | None = None, limit: int = 1000) -> list[str]:
    """A maintenance tick: close every open episode whose last turn is older than MEMORYX_EPISODE_GAP_S."""
    now = time.time() if now is None else now
    closed = []
    for row in services.sql.list_memories(None, limit=limit, categories=[EPISODE_CATEGORY]):
        meta = row.get("metadata") or {}
        turns = meta.get("turns") or []
        if meta.get("open") and turns and now - float(turns[-1].get("at") or now) > services.settings.episode_gap_s:
            scope = Scope(**{k: row.get(k) for k in ("user_id", "agent_id", "run_id", "group_id")})
            with services.sql.scope_lock(scope):
                current = services.sql.get_memories([row["id"]])
                if current and (current[0].get("metadata") or {}).get("open"):
                    close_episode(services, current[0])
                    closed.append(row["id"])
    return closed


def record_turns(services, state: dict, scope, new: list[dict], facts: list[dict]) -> tuple[list[dict], int]:
    """Add a run's turns to its conversation's episodes, under the scope lock (one writer of a conversation's
    open unit at a time): (the episodes written, the model calls spent)."""
    sql, trace_id = services.sql, state["trace_id"]
    with sql.scope_lock(scope):
        current = open_episode(sql, scope)
        meta0 = dict((current or {}).get("metadata") or {})
        if trace_id in (meta0.get("traces") or []):  # a run replayed after a crash: its turns are in already
            current, meta0 = None, {}
        open_turns = list(meta0.get("turns") or []) if current else []
        cuts, calls = _cuts(services, state, open_turns, new)
        units = units_from_cuts(open_turns + new, cuts)
        fact_ids = _assign_facts(units, facts)
        episodes, written = _write_units(services, state, scope, current, meta0, open_turns, units, fact_ids)
    return episodes, calls + sum(written)


def _write_units(services, state, scope, current, meta0, open_turns, units, fact_ids) -> tuple[list[dict], list[int]]:
    """Rewrite the open episode with the turns that continue it (closing it when a later unit starts in this
    add or the first new turn starts one), insert one episode per new unit; the last unit stays open."""
    sql, trace_id = services.sql, state["trace_id"]
    base = dict(state.get("metadata") or {})
    episodes: list[dict] = []
    calls: list[int] = []
    synced: list[tuple[str, str]] = []
    ids = [deterministic_id(trace_id, f"episode{i}") for i in range(len(units))]
    done = {row["id"] for row in sql.get_memories_any(ids)}
    for i, unit in enumerate(units):
        last = i == len(units) - 1
        continued = current is not None and i == 0 and len(unit.messages) >= len(open_turns)
        if current is not None and i == 0 and len(unit.messages) == len(open_turns):  # the new turns start afresh
            pov: list[dict] = []
            row, n = close_episode(services, current, trace_id=trace_id, written=pov)
            episodes.append({"id": row["id"], "memory": row["memory"], "event": "UPDATE", "memory_type": "episodic", "open": False})
            episodes.extend(pov)
            calls.append(n)
            continue
        if not continued and ids[i] in done:
            continue
        text, title, narratives, n = _episode(services, state, unit, final=not last)
        calls.append(n)
        grown = len(unit.messages) - (len(open_turns) if continued else 0)
        meta = _meta(meta0 if continued else base, unit, unit.messages, title=title, narratives=narratives,
                     fact_ids=list(dict.fromkeys((meta0.get("fact_ids") or [] if continued else []) + fact_ids[i])),
                     messages=(int(meta0.get("messages") or len(open_turns)) if continued else 0) + grown,
                     traces=(meta0.get("traces") or [] if continued else []) + [trace_id], is_open=last)
        if continued:
            sql.update_memory(current["id"], text=text, metadata=meta, trace_id=trace_id)
            mid, event = current["id"], "UPDATE"
        else:
            sql.insert_memory(scope=scope, text=text, category=EPISODE_CATEGORY, importance=0.5, memory_type="episodic",
                              metadata=meta, trace_id=trace_id, memory_id=ids[i], valid_at=unit.start)
            mid, event = ids[i], "ADD"
        synced.append((mid, text))
        episodes.append({"id": mid, "memory": text, "event": event, "memory_type": "episodic", "open": last})
        pov, n = write_perspectives(services, {"id": mid, "metadata": meta, **scope_fields(scope)}, final=not last,
                                    trace_id=trace_id)
        episodes.extend(pov)
        calls.append(n)
    if synced:
        vectors = services.embeddings.embed_documents([t for _, t in synced])
        services.projector.sync_memories([i for i, _ in synced], vectors=[list(v) for v in vectors])
    return episodes, calls
