"""Who said it: the speaker of a message and the participant scope its memories go to.

In a group chat (a scope with group_id) every message may carry `name` (the speaker, "Caroline") and
`user_id` (the participant's id in the caller's system). What a participant said is theirs: its memories are
written in the group under the participant (Scope(user_id=<participant>, group_id=g)), and carry
metadata.speaker = the name, so the group sees everything and one participant's memories can be asked for
(search(group_id=g, user_id=...) or speaker=...). The participant id is the message's user_id, else the
speaker's name; a message with neither stays with the caller's scope. Outside groups the scope never changes
(a user's memories stay the user's); the name is still kept as metadata.speaker.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError


def speaker_of(message: dict) -> str | None:
    name = message.get("name")
    return name.strip() if isinstance(name, str) and name.strip() else None


def participant_of(message: dict) -> str | None:
    """The participant id of a group chat message: its user_id, else its speaker's name."""
    uid = message.get("user_id")
    if isinstance(uid, str) and uid.strip():
        return uid.strip()
    return speaker_of(message)


def participant_scope(scope: Scope, message: dict | None) -> Scope:
    """Where a message's memories go: the speaking participant within the group; the scope itself outside a
    group or for a message that names nobody."""
    if scope.group_id is None or not message:
        return scope
    who = participant_of(message)
    return replace(scope, user_id=who) if who else scope


def with_participants(messages: Any, participants: Any, group_id: str | None) -> Any:
    """`messages` with each speaker's user id written in from `participants` ({speaker name: user id}, names
    matched case-insensitively), so the facts a speaker states about themself ("I moved to Boston") belong to
    that user within the group: `search(user_id=...)` and `get_profile(user_id=...)` find them. A message that
    already carries a user_id keeps it; a speaker the map does not name keeps their name as participant id."""
    if participants is None:
        return messages
    if not isinstance(participants, dict) or not all(
            isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip() for k, v in participants.items()):
        raise InvalidInputError("participants must map speaker names to user ids, e.g. "
                                "{\"Caroline\": \"user-17\", \"Melanie\": \"user-42\"}.")
    if group_id is None:
        raise InvalidInputError("participants= places each speaker's facts in a group chat: pass group_id= too "
                                "(e.g. group_id=\"book-club\").")
    if not isinstance(messages, list):
        raise InvalidInputError("participants= needs messages as a list of {\"role\", \"name\", \"content\"} "
                                "dicts: a plain string names no speaker.")
    by_name = {name.strip().casefold(): uid.strip() for name, uid in participants.items()}
    out = []
    for message in messages:
        speaker = speaker_of(message) if isinstance(message, dict) else None
        if speaker and speaker.casefold() in by_name and not participant_of({"user_id": message.get("user_id")}):
            message = {**message, "user_id": by_name[speaker.casefold()]}
        out.append(message)
    return out


def speaker_meta(message: dict) -> dict[str, str]:
    """metadata of a memory from this message: the speaker's name and participant id (when given)."""
    out: dict[str, str] = {}
    if speaker_of(message):
        out["speaker"] = speaker_of(message)
    if isinstance(message.get("user_id"), str) and message["user_id"].strip():
        out["participant_id"] = message["user_id"].strip()
    return out


def event_time(message: dict) -> datetime | None:
    """The message's time (validate_input made it ISO-8601): the memory's valid_at."""
    ts = message.get("timestamp")
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def message_by_speaker(messages: list[dict]) -> dict[str, dict]:
    """Speaker name (case-folded) and participant id -> the speaker's last message (to place a model's fact)."""
    out: dict[str, dict] = {}
    for m in messages:
        for key in (speaker_of(m), participant_of(m)):
            if key:
                out[key.casefold()] = m
    return out


def message_for_fact(fact: dict, by_speaker: dict[str, dict]) -> dict | None:
    """The message a fact's speaker (the model's "speaker" field) spoke, None when unknown."""
    who: Any = fact.get("speaker")
    if isinstance(who, str) and who.strip():
        return by_speaker.get(who.strip().casefold())
    return None


def fact_placement(scope: Scope, fact: dict, messages: list[dict]) -> tuple[Scope, dict[str, str]]:
    """(scope, metadata) of a fact extracted from `messages` in `scope`: in a group chat the fact goes to the
    participant who stated it (the model's "speaker"; the only speaker when there is one), with
    metadata.speaker. Outside groups the scope is unchanged and only a given speaker is recorded."""
    named = [m for m in messages if speaker_of(m) or participant_of(m)]
    message = message_for_fact(fact, message_by_speaker(named))
    if message is None and scope.group_id is not None:
        people = {participant_of(m) for m in named}
        if len(people) == 1:
            message = named[-1]
    if message is None:
        who = fact.get("speaker")
        return scope, ({"speaker": who.strip()} if isinstance(who, str) and who.strip() else {})
    return participant_scope(scope, message), speaker_meta(message)
