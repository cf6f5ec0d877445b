"""Prompt of the optional profile step (MEMORYX_PROFILE_MODEL): profile values from facts no rule covers.

The rules of memoryx.knowledge.profiles read the usual fact shapes ("User lives in X", "用户喜欢X"); free text such as
"User has been vegetarian since 2019" or "User is training for a marathon in May" needs a model. The answer is
checked against `ProfileUpdates`; a value for an unknown field or fact is dropped, never raised on.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

PROFILE_FIELDS = ("name", "alias", "home", "work", "relationship", "preference", "dislike", "goal")

PROFILE_PROMPT = (
    "[memoryx-task: profile_update]\n"
    "You maintain a user profile. For each numbered fact about the user, list the profile values it states, "
    "if any. Fields: name, alias (another name the user goes by), home (where the user lives now), work "
    "(employer or job), relationship (\"role: name\", e.g. \"sister: Mary\"), preference (something the user "
    "likes), dislike, goal (something the user wants to do). Use the fact's own language for values. A fact "
    "stating the user no longer likes something gives {\"op\": \"end\", \"field\": \"preference\"}. Answer with "
    'JSON only: {"updates": [{"fact": n, "op": "set"|"add"|"end", "field": "...", "value": "..."}]}; '
    'facts that say nothing about who the user is give no update.'
)

RETRY_PROFILE_PROMPT = ('Your answer could not be used: {error}. Answer again with only the JSON object '
                        '{{"updates": [{{"fact": n, "op": "...", "field": "...", "value": "..."}}]}}.')


class ProfileUpdate(BaseModel):
    fact: int
    op: str = "add"
    field: str
    value: str

    @field_validator("value", "field", "op", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return value.strip() if isinstance(value, str) else ""


class ProfileUpdates(BaseModel):
    """The model's answer; entries that are not usable updates are dropped (`usable`)."""

    updates: list[dict] = Field(default_factory=list)

    def usable(self, n_facts: int) -> list[ProfileUpdate]:
        out = []
        for raw in self.updates:
            try:
                u = ProfileUpdate.model_validate(raw)
            except Exception:  # one bad entry does not spoil the others
                continue
            if u.field in PROFILE_FIELDS and u.op in ("set", "add", "end") and u.value and 0 <= u.fact < n_facts:
                if u.field in ("name", "home", "work") and u.op == "add":
                    u.op = "set"
                out.append(u)
        return out


def profile_input(facts: list[str]) -> str:
    return "\n".join(f"{i}. {text}" for i, text in enumerate(facts))
