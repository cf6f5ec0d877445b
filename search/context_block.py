"""A ready-to-paste memory block for a chat prompt (`Memory.get_context(query, user_id=..., max_tokens=...)`).

    from memoryx.search.context_block import build_context
    block = build_context(m.search("what should I cook?", user_id="alice"), max_tokens=300)
    system_prompt = "You are a helpful assistant.\\n\\n" + block["context"]

The block lists the memories best first, each with the date it is about (when the event happened: valid_at;
else when it was stored), then the knowledge-graph relations found, and
stops before `max_tokens` (estimated without a tokenizer: one token per Chinese/Japanese/Korean character,
about four characters per token elsewhere - close to what GPT-style tokenizers give, and on the safe side).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from memoryx.core.text import estimate_tokens
from memoryx.errors import InvalidInputError

__all__ = ["build_context", "estimate_tokens"]

HEADER = "## Memories about the user (most relevant first)"
REL_HEADER = "## Known relations"
EMPTY = "No stored memories are relevant to this request."
PROFILE_HEADER = "## About the user"  # profile and recent episodes before the memories
EPISODES_HEADER = "## Recent conversations"
LONG_TERM_HEADER = "## Core memories"  # memory layers: long-term, then the run's working memories
WORKING_HEADER = "## This conversation so far"


def _date(value: Any) -> str:
    if not value:
        return ""
    s = str(value)
    return s[:10] if re.match(r"\d{4}-\d{2}-\d{2}", s) else ""


def _episode_line(episode: dict) -> str:
    text = " ".join(str(episode.get("memory") or "").split())
    return "- " + (text if text.startswith("[") else f"[{_date(episode.get('valid_at') or episode.get('created_at'))}] {text}")


def _clip(text: str, budget: int) -> str:
    """The longest prefix of `text` within `budget` tokens, with an ellipsis."""
    if estimate_tokens(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid] + "…") <= budget:
            lo = mid
        else:
            hi = mid - 1
    return (text[:lo].rstrip() + "…") if lo > 0 else ""


def build_context(results: Any, relations: Iterable[dict] | None = None, max_tokens: int = 1000, *,
                  header: str = HEADER, profile: list[str] | None = None, episodes: list[dict] | None = None,
                  long_term: list[dict] | None = None, working: list[dict] | None = None) -> dict:
    """Format search results into a prompt block within `max_tokens`.

    `results` is the list of result dicts of `Memory.search`, or the whole search output
    ({"results": [...], "relations": [...]}). Returns {"context": str, "memories": [ids used],
    "relations": [relations used], "tokens": estimated tokens, "truncated": bool}.

    `profile` (lines of memoryx.knowledge.profiles.profile_lines) and `episodes` (episode memories, newest first) come
    first, each within a quarter of the budget; the memories fill the rest, without the episodes
    already shown. "episodes" in the answer lists the episode ids used.

    `long_term` and `working` (memory layers, the scope's long-term memories and the run's working
    ones) follow, each within a sixth of the budget; the search results (short-term and the rest) fill what
    is left, without the memories already shown. Their ids are listed in "memories" too.
    """
    if isinstance(results, dict):
        if relations is None:
            relations = results.get("relations")
        results = results.get("results") or []
    results = list(results or [])
    relations = list(relations or [])
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise InvalidInputError(f"max_tokens must be a positive integer, got {max_tokens!r}")

    lines: list[str] = []
    used_ids: list[str] = []
    used_rel: list[dict] = []
    truncated = False
    total = 0

    def fits(line: str) -> bool:
        return total + estimate_tokens(line) + 1 <= max_tokens  # +1 for the newline

    used_episodes: list[str] = []
    for title, items in ((PROFILE_HEADER, [(None, ln) for ln in profile or []]),
                         (EPISODES_HEADER, [(e.get("id"), _episode_line(e)) for e in episodes or []])):
        cap = total + max_tokens // 4
        if not items or total + estimate_tokens(title) + 1 > cap:
            continue
        section = [title]
        spent = estimate_tokens(title) + 1
        for ident, line in items:
            if total + spent + estimate_tokens(line) + 1 > cap:
                truncated = True
                break
            section.append(line)
            spent += estimate_tokens(line) + 1
            if ident:
                used_episodes.append(ident)
        if len(section) > 1:
            lines.extend(section)
            total += spent
    layered: list[str] = []
    for title, items in ((LONG_TERM_HEADER, long_term or []), (WORKING_HEADER, working or [])):
        cap = total + max_tokens // 6
        section, spent = [title], estimate_tokens(title) + 1
        for m in items:
            line = f"- {str(m.get('memory') or '').strip()}"
            if line == "- " or m.get("id") in layered:
                continue
            if total + spent + estimate_tokens(line) + 1 > cap:
                truncated = True
                break
            section.append(line)
            spent += estimate_tokens(line) + 1
            layered.append(m.get("id"))
        if len(section) > 1:
            lines.extend(section)
            total += spent
    results = [r for r in results if r.get("id") not in used_episodes and r.get("id") not in layered]

    if results and fits(header):
        lines.append(header)
        total += estimate_tokens(header) + 1
        for r in results:
            text = str(r.get("memory") or "").strip()
            if not text:
                continue
            date = _date(r.get("valid_at") or r.get("created_at"))  # when it happened, else when it was said
            prefix = f"- [{date}] " if date else "- "
            line = prefix + text
            if not fits(line):
                truncated = True
                room = max_tokens - total - 1 - estimate_tokens(prefix)
                if not used_ids and room > 3:  # at least part of the best memory
                    clipped = _clip(text, room)
                    if clipped:
                        line = prefix + clipped
                        lines.append(line)
                        total += estimate_tokens(line) + 1
                        used_ids.append(r.get("id"))
                break
            lines.append(line)
            total += estimate_tokens(line) + 1
            used_ids.append(r.get("id"))
    elif results:
        truncated = True

    rel_lines = []
    for rel in relations:
        src, verb, dst = rel.get("source"), rel.get("relationship") or rel.get("relation"), rel.get("destination")
        if src and verb and dst:
            rel_lines.append((rel, f"- {src} — {verb} — {dst}"))
    if rel_lines and not truncated and fits(REL_HEADER):
        lines.append(REL_HEADER)
        total += estimate_tokens(REL_HEADER) + 1
        for rel, line in rel_lines:
            if not fits(line):
                truncated = True
                break
            lines.append(line)
            total += estimate_tokens(line) + 1
            used_rel.append(rel)
    elif rel_lines:
        truncated = True

    if not lines:
        text = EMPTY if not results else ""
        return {"context": text, "memories": [], "relations": [], "tokens": estimate_tokens(text),
                "truncated": truncated, "episodes": []}
    text = "\n".join(lines)
    return {"context": text, "memories": layered + used_ids, "relations": used_rel, "tokens": estimate_tokens(text),
            "truncated": truncated, "episodes": used_episodes}
