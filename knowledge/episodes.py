"""MemUnits and episodes: a conversation cut into units, one episode memory per unit.

`cut_units` cuts a conversation's messages into units, by rules: a gap between message timestamps longer than
MEMORYX_EPISODE_GAP_S, an explicit topic marker at the start of a message ("by the way", "anyway", "换个话题",
"话说", "ところで"), or a turn whose embedding is less similar to the unit so far than
MEMORYX_EPISODE_TOPIC_THRESHOLD (a topic shift; a unit keeps at least two turns before such a cut).
`unit_transcript` renders a unit for the episode prompt (prompts/episodes.py) and `parse_transcript` reads it
back; `offline_narratives` is the deterministic summary the offline model answers with: the first sentence
of each participant's first and last message. `episode_text` is the stored memory text: the time span and
one short narrative per participant. A unit grows across add calls (nodes/episodes.py): `stored_turns` /
`unit_of_turns` keep and rebuild it from its open episode's metadata, `drop_participant` takes a purged
participant's turns out of it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

from memoryx.models.offline_answers import answers_task

TOPIC_MARKER = re.compile(
    r"^\s*(?:by the way|btw|anyway|on another note|changing the subject|speaking of which|unrelated,|"
    r"换个话题|话说|对了|另外|顺便说一下|ところで|話は変わりますが|そういえば)", re.I)
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
MAX_NARRATIVE_CHARS = 240
EPISODE_CATEGORY = "episode"  # the category of every episode memory, the group's and each participant's


@dataclass
class MemUnit:
    """Consecutive messages of one conversation about one thing, at one time."""

    messages: list[dict] = field(default_factory=list)  # {"role", "content", "name"?, "timestamp"?}
    start: str | None = None  # ISO time of the first / last timestamped message
    end: str | None = None

    @property
    def participants(self) -> list[str]:
        return list(dict.fromkeys(participant_of(m) for m in self.messages))

    @property
    def text(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


def participant_of(message: dict) -> str:
    """The speaker's name when the message carries one, else User / Assistant."""
    name = message.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    return {"user": "User", "assistant": "Assistant"}.get(message.get("role"), str(message.get("role") or "User"))


def epoch_of(value) -> float | None:
    """Seconds of a message timestamp (epoch number or ISO string), None when missing or unreadable."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) / (1000.0 if value > 1e11 else 1.0)
    try:
        dt = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, timezone.utc).isoformat()


def _cosine(a, b) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def cut_points(messages: list[dict], vectors: list | None, *, gap_s: float, threshold: float) -> list[int]:
    """Indexes of the messages that start a new unit (0 always does)."""
    cuts = [0] if messages else []
    centroid: list[float] | None = None
    size = 0
    last_time: float | None = None
    for i, m in enumerate(messages):
        t = epoch_of(m.get("timestamp"))
        vec = list(vectors[i]) if vectors and i < len(vectors) and vectors[i] is not None else None
        cut = False
        if i > 0:
            if t is not None and last_time is not None and t - last_time > gap_s:
                cut = True
            elif TOPIC_MARKER.match(m.get("content") or ""):
                cut = True
            elif vec is not None and centroid is not None and size >= 2 and threshold > -1 and \
                    _cosine(vec, centroid) < threshold:
                cut = True
        if cut:
            cuts.append(i)
            centroid, size = None, 0
        if vec is not None:
            centroid = vec if centroid is None else [(c * size + v) / (size + 1) for c, v in zip(centroid, vec)]
            size += 1
        if t is not None:
            last_time = t
    return cuts


def units_from_cuts(messages: list[dict], cuts: list[int]) -> list[MemUnit]:
    bounds = sorted(set(c for c in cuts if 0 <= c < len(messages)) | ({0} if messages else set()))
    units = []
    for a, b in zip(bounds, bounds[1:] + [len(messages)]):
        msgs = messages[a:b]
        times = [t for t in (epoch_of(m.get("timestamp")) for m in msgs) if t is not None]
        units.append(MemUnit(messages=msgs, start=_iso(min(times)) if times else None,
                             end=_iso(max(times)) if times else None))
    return units


def cut_units(messages: list[dict], vectors: list | None = None, *, gap_s: float = 1800.0,
              threshold: float = 0.12) -> list[MemUnit]:
    """The units of a conversation by the rules (see the module docstring)."""
    return units_from_cuts(messages, cut_points(messages, vectors, gap_s=gap_s, threshold=threshold))


# ------------------------------------------------------------------------------------------------ across adds

# A unit grows across add calls (a chat replayed one turn per add): its turns are kept in the open episode's
# metadata ("turns"), capped: the first HEAD_TURNS and the last MAX_TURNS - HEAD_TURNS (the narratives read a
# speaker's first and last words; "messages" counts every turn).
MAX_TURNS = 30
HEAD_TURNS = 6
MAX_TURN_CHARS = 400


def stored_turns(messages: list[dict], now: float) -> list[dict]:
    """The turns of a unit as kept in its episode's metadata: role, content (capped), name, user_id and the
    time (the message's, else the time of the add: a gap between two adds without timestamps still counts)."""
    out = []
    for m in messages:
        t = epoch_of(m.get("timestamp"))
        turn = {"role": m.get("role") or "user", "content": str(m.get("content") or "")[:MAX_TURN_CHARS],
                "at": t if t is not None else now, **({"timestamp": m["timestamp"]} if t is not None else {})}
        for key in ("name", "user_id"):
            if isinstance(m.get(key), str) and m[key].strip():
                turn[key] = m[key].strip()
        out.append(turn)
    return out


def cap_turns(turns: list[dict]) -> list[dict]:
    return turns if len(turns) <= MAX_TURNS else turns[:HEAD_TURNS] + turns[-(MAX_TURNS - HEAD_TURNS):]


def continues(open_turns: list[dict], new: list[dict], *, gap_s: float) -> bool:
    """True when the first new turn continues the open unit: within `gap_s` of its last turn and not opening
    with a topic marker (the similarity rule is applied by the caller, which holds the vectors)."""
    if not open_turns or not new:
        return False
    last, first = open_turns[-1].get("at"), new[0].get("at")
    if last is not None and first is not None and first - last > gap_s:
        return False
    return not TOPIC_MARKER.match(new[0].get("content") or "")


def unit_of_turns(turns: list[dict]) -> MemUnit:
    """A unit of stored turns; its span comes from the messages' own timestamps only."""
    times = [t for t in (epoch_of(m.get("timestamp")) for m in turns) if t is not None]
    return MemUnit(messages=turns, start=_iso(min(times)) if times else None, end=_iso(max(times)) if times else None)


def drop_participant(turns: list[dict], ids: set[str]) -> list[dict]:
    """The turns of a unit without those of a participant (by name or user_id, case-folded): a purge."""
    folded = {i.casefold() for i in ids}
    return [t for t in turns if not ({str(t.get("name") or "").casefold(), str(t.get("user_id") or "").casefold()} & folded)]


# ------------------------------------------------------------------------------------------------ narratives


def unit_transcript(unit: MemUnit) -> str:
    """One line per message: `[timestamp] Speaker: text` (the timestamp only when the message has one)."""
    lines = []
    for m in unit.messages:
        stamp = f"[{m['timestamp']}] " if m.get("timestamp") else ""
        lines.append(f"{stamp}{participant_of(m)}: {' '.join(str(m['content']).split())}")
    return "\n".join(lines)


_LINE = re.compile(r"^(?:\[(?P<t>[^\]]*)\]\s*)?(?P<who>[^:：\n]{1,80})[:：]\s*(?P<text>.*)$")


def parse_transcript(text: str) -> list[tuple[str, str]]:
    """(speaker, text) pairs of a transcript written by `unit_transcript`."""
    out = []
    for line in (text or "").splitlines():
        m = _LINE.match(line.strip())
        if m and m.group("text").strip():
            out.append((m.group("who").strip(), m.group("text").strip()))
    return out


def _first_sentence(text: str) -> str:
    found = _SENTENCE.findall(text or "")
    return (found[0] if found else text or "").strip()


def offline_narratives(turns: list[tuple[str, str]]) -> dict[str, str]:
    """Deterministic narratives: per speaker, the first sentence of their first and of their last message."""
    said: dict[str, list[str]] = {}
    for who, text in turns:
        said.setdefault(who, []).append(_first_sentence(text))
    out = {}
    for who, sentences in said.items():
        picked = list(dict.fromkeys([sentences[0], sentences[-1]]))
        narrative = " … ".join(s for s in picked if s)
        out[who] = narrative[:MAX_NARRATIVE_CHARS]
    return out


def span_text(start: str | None, end: str | None) -> str:
    if not start:
        return ""
    a, b = start[:16].replace("T", " "), (end or start)[:16].replace("T", " ")
    if a == b:
        return a
    return f"{a} – {b[11:]}" if a[:10] == b[:10] else f"{a} – {b}"


def episode_text(narratives: dict[str, str], start: str | None, end: str | None, title: str | None = None) -> str:
    """The stored episode memory: "[span] title. Alice: ... Assistant: ..." (span and title when known)."""
    parts = []
    span = span_text(start, end)
    if span:
        parts.append(f"[{span}]")
    if title:
        parts.append(title.rstrip(".") + ".")
    parts.extend(f"{who}: {text}" for who, text in narratives.items() if text)
    return " ".join(parts)


@answers_task("summarize_episode")
def offline_episode_answer(human: str) -> str:
    """The offline model's answer to the episode prompt: the deterministic narratives, no title."""
    return json.dumps({"title": None, "narratives": offline_narratives(parse_transcript(human))}, ensure_ascii=False)
