"""LoCoMo conversations (Maharana et al., 2024): the one reader of its JSON, used by `memoryx import` and by
the retrieval benchmark (bench/recall/).

A sample is {"sample_id", "conversation": {"speaker_a", "speaker_b", "session_1": [turn, ...],
"session_1_date_time": "1:56 pm on 8 May, 2023", ...}, "qa": [{"question", "answer", "evidence", "category"}]};
a turn is {"speaker", "dia_id", "text"} with an optional "blip_caption" for a shared photo.

Only the standard library is imported here: the CLI loads this module on `memoryx import`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

_DATE = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I)


@dataclass(frozen=True)
class Session:
    """One session of a conversation, its turns as written in the file (empty ones included)."""

    name: str  # "session_3"
    number: int  # 3
    date: str | None  # as written, e.g. "1:56 pm on 8 May, 2023"
    turns: list[dict]


def is_locomo(data: Any) -> bool:
    """A LoCoMo file holds one sample or a list of samples, each with a "conversation"."""
    if isinstance(data, list):
        return bool(data) and isinstance(data[0], dict) and "conversation" in data[0]
    return isinstance(data, dict) and "conversation" in data


def sessions(sample: dict) -> list[Session]:
    """The sessions of one conversation, in order."""
    conv = sample.get("conversation") or {}
    keys = sorted((k for k in conv if k.startswith("session_") and isinstance(conv[k], list)),
                  key=lambda k: int(k.split("_")[1]))
    return [Session(name=k, number=int(k.split("_")[1]), date=conv.get(f"{k}_date_time"), turns=conv[k])
            for k in keys]


def session_messages(sample: dict, session: Session) -> list[dict]:
    """Chat messages of a session: the first speaker ("speaker_a") is the user, the other the assistant.

    Each message is "Speaker: text" (a shared photo as its caption), named after the speaker and stamped
    with the session date; turns without text are left out.
    """
    return [message for _, message in turn_messages(sample, session)]


def turn_messages(sample: dict, session: Session, *, captions: bool = True) -> list[tuple[str | None, dict]]:
    """(dia_id, message) of each turn with text (session_messages' messages, with their turn ids).
    `captions=False`: the turn's own words only, without the BLIP caption of a shared photo."""
    speaker_a = (sample.get("conversation") or {}).get("speaker_a")
    stamp = parse_session_date(session.date).isoformat() if session.date else None
    out = []
    for turn in session.turns:
        text = turn.get("text") or ""
        if captions and turn.get("blip_caption"):
            text = f"{text} [shares a photo: {turn['blip_caption']}]"
        if not text.strip():
            continue
        role = "user" if turn.get("speaker") == speaker_a else "assistant"
        message = {"role": role, "content": f"{turn.get('speaker')}: {text}", "name": turn.get("speaker")}
        if stamp:  # ISO-8601, as add() requires: the memory's valid_at (when it was said)
            message["timestamp"] = stamp
        out.append((turn.get("dia_id"), message))
    return out


def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime."""
    m = _DATE.match(text or "")
    if not m:
        raise ValueError(f"unrecognised LoCoMo session date {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    hour = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    dt = datetime.strptime(f"{day} {month} {year}", "%d %B %Y")
    return dt.replace(hour=hour, minute=int(minute), tzinfo=timezone.utc)


def questions(sample: dict) -> list[dict]:
    """The QA items of a sample, each with its evidence split into turn ids ("D1:3; D2:8" -> ["D1:3", "D2:8"])."""
    out = []
    for qa in sample.get("qa") or []:
        evidence = [e for x in qa.get("evidence") or [] for e in re.split(r"[;,\s]+", x) if e.strip()]
        out.append({**qa, "evidence": evidence})
    return out
