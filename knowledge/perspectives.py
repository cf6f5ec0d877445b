"""Episodes per participant: a group conversation unit with two or more participants yields one episode per
participant, written from that participant's point of view and kept in their own scope.

The unit itself (its turns, its narratives per speaker, the facts drawn from it) is the group's episode,
kept in the group's own scope by memoryx.knowledge.episode_memories (search(group_id=g) sees the whole
conversation). Each participant's episode is a memory of the same unit in Scope(user_id=<participant>,
group_id=g) (the agent and run of the unit kept): search(user_id="u-17", group_id=g) and get_context find
Caroline's episode and never Melanie's. The participant id is the one the unit's facts use
(memoryx.ingest.speakers): the message's user_id (written in from Memory.add's `participants=` map), else the
speaker's name, so a speaker the map does not name keeps an episode under their name within the group, next
to their facts. An unnamed assistant (the chatbot) is no participant: its turns are in the others' episodes.

While the unit is open each participant's episode is the deterministic one (`offline_perspectives`: their own
words first, then the others'); when the unit closes the extraction model writes every participant's episode in
one call (PERSPECTIVE_PROMPT), a failed or unreadable answer keeping the deterministic ones. The semantic
memories derived from a participant's episode are the unit's facts that participant stated (metadata.fact_ids,
the facts in their scope). Ids are deterministic (unit id / participant), so a rewrite or a replayed run
updates the same memory; an episode the user deleted is not brought back. Episode metadata: {"episode": true,
"open": false, "perspective": participant id, "speaker": name, "unit_id", "unit_open", "participants",
"start", "end", "title", "fact_ids", "messages", "narratives", "turns", "traces"} ("turns" and "narratives"
as in the unit, so a purge of another participant redacts their words here too).
"""

from __future__ import annotations

import json

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.core.runs import deterministic_id
from memoryx.core.scope import Scope
from memoryx.knowledge.episodes import (
    EPISODE_CATEGORY,
    MAX_NARRATIVE_CHARS,
    offline_narratives,
    parse_transcript,
    span_text,
    unit_of_turns,
    unit_transcript,
)
from memoryx.models.llm_io import RetriesExhausted, extract_json, message_text
from memoryx.models.offline_answers import answers_task
from memoryx.models.step_calls import ask_or_fall_back, run_options
from memoryx.prompts.episodes import PERSPECTIVE_PROMPT, RETRY_PERSPECTIVE_PROMPT, PerspectiveAnswer

_HEADER = "Participants: "


def participants(turns: list[dict]) -> dict[str, str]:
    """{participant id: name} of a unit's turns, in order of first turn. A turn naming nobody names no
    participant (an unnamed assistant turn is the chatbot); a named one does whatever its role (a replayed
    chat log often sends its second speaker as the assistant)."""
    out: dict[str, str] = {}
    for t in turns:
        name, uid = (t.get("name") or "").strip(), (t.get("user_id") or "").strip()
        if uid or name:
            out.setdefault(uid or name, name or uid)
    return out


def perspective_input(turns: list[dict], names: list[str]) -> str:
    """The human message of PERSPECTIVE_PROMPT: the participants' names, then the unit's transcript."""
    return _HEADER + ", ".join(names) + "\n" + unit_transcript(unit_of_turns(turns))


def offline_perspectives(names: list[str], turns: list[tuple[str, str]]) -> dict[str, str]:
    """Each participant's deterministic episode: their own words (whole messages, capped) first, then the
    others' in short (their first and last sentences); no phrasing added, so it reads the same in every
    language."""
    said = offline_narratives(turns)
    out = {}
    for name in names:
        words = " ".join(" ".join(text.split()) for who, text in turns if who == name)[:MAX_NARRATIVE_CHARS]
        own = f"{name}: {words}" if words else name
        others = "; ".join(f"{who}: {text}" for who, text in said.items() if who != name and text)
        out[name] = (f"{own} ({others})" if others else own)[:2 * MAX_NARRATIVE_CHARS]
    return out


@answers_task("perspective_episodes")
def offline_perspective_answer(human: str) -> str:
    """The offline model's answer to PERSPECTIVE_PROMPT: the deterministic episodes, no title."""
    first, _, transcript = (human or "").partition("\n")
    names = [n.strip() for n in first[len(_HEADER):].split(",") if n.strip()] if first.startswith(_HEADER) else []
    return json.dumps({"title": None, "episodes": offline_perspectives(names, parse_transcript(transcript))},
                      ensure_ascii=False)


def _model_perspectives(services, state: dict, turns: list[dict], names: list[str]) -> PerspectiveAnswer | None:
    llm = services.extraction_llm
    reply = ask_or_fall_back(
        llm, [SystemMessage(content=PERSPECTIVE_PROMPT), HumanMessage(content=perspective_input(turns, names))],
        lambda a: PerspectiveAnswer.model_validate(extract_json(message_text(a))), step="perspective_episodes",
        retry_prompt=RETRY_PERSPECTIVE_PROMPT, fallback="kept the deterministic episodes",
        trace_id=state.get("trace_id"), **run_options(llm, state, "perspective_episodes", services.settings))
    return None if isinstance(reply, RetriesExhausted) else reply.value


def _texts(services, state: dict, turns: list[dict], names: list[str], final: bool) -> tuple[str | None, dict, int]:
    texts = offline_perspectives(names, parse_transcript(unit_transcript(unit_of_turns(turns))))
    if not final:
        return None, texts, 0
    answer = _model_perspectives(services, state, turns, names)
    if answer is None:
        return None, texts, 1
    by_fold = {k.casefold(): v for k, v in answer.episodes.items()}
    return answer.title, {n: by_fold.get(n.casefold()) or texts[n] for n in names}, 1


def write_perspectives(services, unit_row: dict, *, final: bool, trace_id: str | None) -> tuple[list[dict], int]:
    """Write (or rewrite) each participant's episode of the group unit `unit_row` (the group's episode memory,
    metadata as written by episode_memories). `final`: the unit is closed, the model writes the episodes.
    Returns (the episodes written [{"id", "memory", "event", "memory_type", "user_id", "speaker"}], model calls).
    Nothing outside a group, with MEMORYX_PARTICIPANT_EPISODES off, or with fewer than two participants."""
    meta = unit_row.get("metadata") or {}
    turns, group = list(meta.get("turns") or []), unit_row.get("group_id")
    who = participants(turns)
    if not group or not services.settings.participant_episodes or len(who) < 2:
        return [], 0
    sql = services.sql
    state = {"trace_id": trace_id or unit_row.get("trace_id"), "user_id": None}
    title, texts, calls = _texts(services, state, turns, list(who.values()), final)
    facts = sql.get_memories(list(meta.get("fact_ids") or []))
    span = span_text(meta.get("start"), meta.get("end"))
    ids = {pid: deterministic_id(unit_row["id"], f"perspective/{pid}") for pid in who}
    existing = {r["id"]: r for r in sql.get_memories_any(list(ids.values()))}
    written, synced = [], []
    for pid, name in who.items():
        mid = ids[pid]
        text = " ".join(p for p in (f"[{span}]" if span else "", (title.rstrip(".") + ".") if title else "", texts[name]) if p)
        pmeta = {"episode": True, "open": False, "perspective": pid, "speaker": name, "unit_id": unit_row["id"],
                 "unit_open": bool(meta.get("open")), "participants": meta.get("participants") or list(who.values()),
                 "start": meta.get("start"), "end": meta.get("end"), "title": title,
                 "fact_ids": [f["id"] for f in facts if f.get("user_id") == pid], "messages": meta.get("messages"),
                 "narratives": meta.get("narratives") or {}, "turns": turns, "traces": meta.get("traces") or []}
        row = existing.get(mid)
        if row is not None:
            if row.get("deleted_at") or row.get("status") in ("merged", "archived", "summarized"):
                continue  # deleted, archived or merged meanwhile: not brought back
            if row["memory"] == text and (row.get("metadata") or {}) == pmeta:
                continue
            sql.update_memory(mid, text=text, metadata=pmeta, trace_id=trace_id)
            event = "UPDATE"
        else:
            scope = Scope(user_id=pid, agent_id=unit_row.get("agent_id"), run_id=unit_row.get("run_id"), group_id=group)
            sql.insert_memory(scope=scope, text=text, category=EPISODE_CATEGORY, importance=0.5, memory_type="episodic",
                              metadata=pmeta, trace_id=trace_id, memory_id=mid, valid_at=meta.get("start"))
            event = "ADD"
        synced.append((mid, text))
        written.append({"id": mid, "memory": text, "event": event, "memory_type": "episodic", "user_id": pid,
                        "speaker": name})
    if synced:
        vectors = services.embeddings.embed_documents([t for _, t in synced])
        services.projector.sync_memories([i for i, _ in synced], vectors=[list(v) for v in vectors])
    return written, calls
