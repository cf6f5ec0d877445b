"""build_episodes: the add graph's episode step (MEMORYX_EPISODES, off by default).

The messages of the add are cut into MemUnits (memoryx.episodes: time gaps, topic markers, similarity drops;
with MEMORYX_EPISODE_SEGMENTER=model the extraction model names the topic cuts). Each unit becomes one episode
memory in the caller's scope: memory_type "episodic", category "episode", its text the time span and one
short narrative per participant (prompts/episodes.py; the offline model answers with a deterministic summary),
metadata {"episode": true, "participants", "start", "end", "narratives", "title", "fact_ids", "messages"}.
`fact_ids` are the memories this run added or updated from the unit (with several units, each fact goes to the
unit sharing most words with it). Episodes are stored and projected like any memory, so search finds them.

Ids are deterministic (trace id / unit index): a run replayed after a crash writes no second copy. A model
failure falls back to the deterministic narrative; an episode never fails an add.
"""

from __future__ import annotations

import logging
import time

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from memoryx.context import Context, services_of
from memoryx.episodes import (MAX_NARRATIVE_CHARS, MemUnit, cut_points, cut_units, episode_text, offline_narratives, parse_transcript,
                              unit_transcript, units_from_cuts)
from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import RetriesExhausted, call_with_retry, extract_json, message_text, run_deadline
from memoryx.nodes.add_common import deterministic_id, elapsed_ms, llm_config, scope_of
from memoryx.prompts.episodes import (EPISODE_PROMPT, RETRY_EPISODE_PROMPT, RETRY_SEGMENT_PROMPT, SEGMENT_PROMPT,
                                      EpisodeAnswer, SegmentAnswer)
from memoryx.state import AddState
from memoryx.text import tokenize

log = logging.getLogger(__name__)
EPISODE_CATEGORY = "episode"


def _call(services, state: dict, step: str, system: str, human: str, parse, retry: str):
    llm = services.extraction_llm
    try:
        return call_with_retry(llm, [SystemMessage(content=system), HumanMessage(content=human)], parse,
                               retry_prompt=retry, config=llm_config(state, step, model_name_of(llm)),
                               deadline=run_deadline(services.settings.add_time_budget_s),
                               raw_cap=services.settings.llm_raw_answer_cap).value
    except RetriesExhausted as exc:
        log.warning("%s fell back to the rules (trace %s): %s", step, state.get("trace_id"), exc.problem)
        return None


def _units(services, state: dict, messages: list[dict]) -> tuple[list[MemUnit], int]:
    s = services.settings
    vectors = services.embeddings.embed_documents([m["content"] for m in messages]) if s.episode_topic_threshold > -1 else None
    if s.episode_segmenter != "model" or len(messages) < 3:
        return cut_units(messages, vectors, gap_s=s.episode_gap_s, threshold=s.episode_topic_threshold), 0
    numbered = "\n".join(f"{i}. {m['content']}" for i, m in enumerate(messages))
    answer = _call(services, state, "segment_episodes", SEGMENT_PROMPT, numbered,
                   lambda a: SegmentAnswer.model_validate(extract_json(message_text(a))), RETRY_SEGMENT_PROMPT)
    if answer is None:
        return cut_units(messages, vectors, gap_s=s.episode_gap_s, threshold=s.episode_topic_threshold), 1
    gaps = cut_points(messages, None, gap_s=s.episode_gap_s, threshold=-1)  # the time gaps always cut
    return units_from_cuts(messages, gaps + [c for c in answer.cuts if 0 < c < len(messages)]), 1


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


def build_episodes(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    messages = [m for m in state.get("normalized_messages") or [] if m.get("role") in ("user", "assistant")
                and str(m.get("content") or "").strip()]
    if not services.settings.episodes or not messages:
        return {"timings": {"build_episodes": elapsed_ms(start)}}
    units, calls = _units(services, state, messages)
    facts = [] if state.get("infer") is False else \
        [r for r in state.get("executed") or [] if r.get("event") in ("ADD", "UPDATE") and r.get("id")]
    fact_ids = _assign_facts(units, facts)
    scope = scope_of(state)
    trace_id = state["trace_id"]
    sql = services.sql
    ids = [deterministic_id(trace_id, f"episode{i}") for i in range(len(units))]
    done = {row["id"] for row in sql.get_memories_any(ids)}  # a replay after a crash: written already
    written: list[tuple[str, str]] = []
    for i, unit in enumerate(units):
        if ids[i] in done:
            continue
        title, narratives = _narratives(services, state, unit)
        calls += 1
        text = episode_text(narratives, unit.start, unit.end, title)
        if not text:  # a model answer of blank narratives: the deterministic summary stands in
            narratives = offline_narratives(parse_transcript(unit_transcript(unit)))
            text = episode_text(narratives, unit.start, unit.end, title) or unit_transcript(unit)[:MAX_NARRATIVE_CHARS]
        meta = {**dict(state.get("metadata") or {}), "episode": True, "participants": unit.participants,
                "start": unit.start, "end": unit.end, "narratives": narratives, "title": title,
                "fact_ids": fact_ids[i], "messages": len(unit.messages)}
        sql.insert_memory(scope=scope, text=text, category=EPISODE_CATEGORY, importance=0.5, memory_type="episodic",
                          metadata=meta, trace_id=trace_id, memory_id=ids[i])
        written.append((ids[i], text))
    if written:
        vectors = services.embeddings.embed_documents([t for _, t in written])
        services.projector.sync_memories([i for i, _ in written], vectors=[list(v) for v in vectors])
    episodes = [{"id": i, "memory": t, "event": "ADD", "memory_type": "episodic"} for i, t in written]
    return {"episodes": episodes, "timings": {"build_episodes": elapsed_ms(start)},
            "model_calls": {"build_episodes": calls}}
