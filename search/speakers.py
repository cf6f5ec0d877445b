"""Who said it: a question about the user's own life ("what did I buy", "my dog", 我的, 私の) is answered by what
the user said, one about what the assistant said ("what did you recommend", "you told me") by the assistant's
turns. Memories stored from a chat keep the message's role (metadata.role); those of the asked-about side gain
the `role_bonus` knob (nodes/expand_context.py). Memories without a role (extracted facts) are left alone.
"""

from __future__ import annotations

import re

from memoryx.core.text import KANA

_ASSISTANT = re.compile(r"\byou (said|told|recommended|suggested|mentioned|gave|wrote|listed|shared|proposed)\b"
                        r"|\byour (recommendation|suggestion|answer|advice|list)\b|\bdid you\b|\byou (recommend|suggest)"
                        r"|你(说|推荐|建议|提到)|あなたが|おすすめしてくれた", re.I)
_USER = re.compile(r"\b(i|my|me|mine|i'm|i've|i'd|myself)\b|我|私|僕|俺", re.I)
# Japanese leaves the speaker out ("今どこに住んでいますか？": where do I live now): a Japanese question naming no one
# as its subject is about the user
_SOMEONE_ASKED_JA = re.compile(r"あなた|君|きみ|[ァ-ヴー]{2,8}(?:さん|くん|ちゃん)?(?:は|が|の)")


def asked_role(query: str) -> str | None:
    """"assistant", "user" or None (neither side is named)."""
    if _ASSISTANT.search(query):
        return "assistant"
    if _USER.search(query):
        return "user"
    if KANA.search(query) and not _SOMEONE_ASKED_JA.search(query):
        return "user"
    return None


def said_by(memory: dict, role: str) -> bool:
    return (memory.get("metadata") or {}).get("role") == role
