"""Prompt of the episode step (MEMORYX_EPISODES): a short narrative per participant of one conversation unit.

The transcript is written by memoryx.knowledge.episodes.unit_transcript. The offline model answers this prompt (task tag
`summarize_episode`) with memoryx.knowledge.episodes.offline_narratives, a deterministic summary; a real model writes the
narratives. The answer is checked against `EpisodeAnswer`; an unreadable answer falls back to the
deterministic summary (an episode is never a reason to fail an add).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

EPISODE_PROMPT = (
    "[memoryx-task: summarize_episode]\n"
    "Summarise one part of a conversation as an episode for a long-term memory. For each participant, write "
    "one or two sentences in the third person of what they said, did or planned in this part, keeping names, "
    "places, numbers and dates (write relative dates with the absolute date from the timestamps, e.g. "
    "\"last week (2023-05-01)\"). Use the conversation's language. Answer with JSON only: "
    '{"title": "a short title", "narratives": {"<participant>": "..."}}'
)

RETRY_EPISODE_PROMPT = ('Your answer could not be used: {error}. Answer again with only the JSON object '
                        '{{"title": "...", "narratives": {{"<participant>": "..."}}}}.')


class EpisodeAnswer(BaseModel):
    title: str | None = None
    narratives: dict[str, str]  # required: an answer without narratives is retried

    @field_validator("title", mode="before")
    @classmethod
    def _title(cls, value: Any) -> str | None:
        return value.strip()[:120] or None if isinstance(value, str) else None

    @field_validator("narratives", mode="before")
    @classmethod
    def _narratives(cls, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise ValueError("narratives must be an object of participant -> text")
        out = {str(k).strip(): v.strip() for k, v in value.items() if isinstance(v, str) and v.strip() and str(k).strip()}
        if not out:
            raise ValueError("no narrative given")
        return out


# One episode per participant of a group conversation unit, each from that participant's point of view. The
# human message is "Participants: A, B" and the transcript (memoryx.knowledge.perspectives.perspective_input).
PERSPECTIVE_PROMPT = (
    "[memoryx-task: perspective_episodes]\n"
    "Write one episode of this part of a conversation for each listed participant, from that participant's "
    "point of view, for their own long-term memory: in the third person with their name, two or three "
    "sentences of what they said, did, planned or felt, what the others told them or asked of them, and "
    "what they agreed on. Keep names, places, numbers and dates (write relative dates with the absolute "
    "date from the timestamps). Use the conversation's language. Answer with JSON only: "
    '{"title": "a short title", "episodes": {"<participant>": "..."}}'
)

RETRY_PERSPECTIVE_PROMPT = ('Your answer could not be used: {error}. Answer again with only the JSON object '
                            '{{"title": "...", "episodes": {{"<participant>": "..."}}}}.')


class PerspectiveAnswer(BaseModel):
    title: str | None = None
    episodes: dict[str, str]  # participant -> their episode; required: an answer without it is retried

    _title = field_validator("title", mode="before")(EpisodeAnswer._title.__func__)

    @field_validator("episodes", mode="before")
    @classmethod
    def _episodes(cls, value: Any) -> dict[str, str]:
        return EpisodeAnswer._narratives.__func__(cls, value)


SEGMENT_PROMPT = (
    "Split this conversation into units: consecutive messages about one topic. The messages are numbered. "
    'Answer with JSON only: {"cuts": [n, ...]}, the numbers of the messages that start a new topic '
    "(not 0)."
)

RETRY_SEGMENT_PROMPT = 'Your answer could not be used: {error}. Answer again with only {{"cuts": [n, ...]}}.'


class SegmentAnswer(BaseModel):
    cuts: list[int] = Field(default_factory=list)
