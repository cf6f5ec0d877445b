"""Who said it: a question about the user's own life ("what did I buy", "my dog", 我的, 私の) is answered by what
the user said, one about what the assistant said ("what did you recommend", "you told me") by the assistant's
turns. Memories stored from a chat keep the message's role (metadata.role); those of the asked-about side gain
the `role_bonus` knob (nodes/expand_context.py). Memories without a role (extracted facts) are left alone.
"""

from __future__ import annotations

import re

from memoryx.core import lexicon
from memoryx.core.text import KANA

_ASSISTANT = lexicon.pattern("search.asks_assistant", flags=re.I)
_USER = lexicon.matcher("search.asks_user")
# Japanese leaves the speaker out ("今どこに住んでいますか？": where do I live now): a Japanese question naming no one
# as its subject is about the user
_SOMEONE_ASKED_JA = lexicon.pattern("search.someone_asked", "ja")


def asked_role(query: str) -> str | None:
    """"assistant", "user" or None (neither side is named)."""
    if _ASSISTANT.search(query):
        return "assistant"
    if _USER.contains(query):
        return "user"
    if KANA.search(query) and not _SOMEONE_ASKED_JA.search(query):
        return "user"
    return None


def said_by(memory: dict, role: str) -> bool:
    return (memory.get("metadata") or {}).get("role") == role
