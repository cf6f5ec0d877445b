"""Link two memories named by description (seed: link_memories(source_memory_description, ...)): the tool
finds the memories itself and asks back when a description fits more than one.

A reference is a memory id of the scope, or words describing the memory ("我今天不开心", "my trip to Paris").
Words are embedded and looked up among the scope's visible memories (the vector store's cosine, so the
numbers mean the same for every query): memories at cosine >= MIN_COSINE are candidates; the best one is
meant when no other candidate is within AMBIGUITY_MARGIN of it (or the words are the memory's own text).
Otherwise the caller gets the candidates back and is asked which one: a wrong link is worse than a question.
Used by the agents' link_memories tool (memoryx.api.agent_tools) and MCP's memory_link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.lifecycle.state import visible_filter

MIN_COSINE = 0.4  # MiniLM: a description of the memory scores 0.7-0.9, unrelated words 0.0-0.25
AMBIGUITY_MARGIN = 0.08  # "my trip to Paris" fits the May and the June trip within 0.01 of each other
CANDIDATES = 5


@dataclass
class Found:
    """What a reference names: `memory` when exactly one, else `candidates` to ask about ([]: nothing fits)."""

    reference: str
    memory: dict | None = None
    candidates: list[dict] = field(default_factory=list)

    def question(self, role: str) -> str:
        if not self.candidates:
            return (f"The {role} {self.reference!r} was not found among this user's memories; create it first "
                    f"(create_memory / memory_add) or find it with a search.")
        listed = "; ".join(f"[{c['id']}] {c['memory']}" for c in self.candidates)
        return (f"The {role} {self.reference!r} fits several memories: {listed}. Which one? Call again with its "
                f"id or a closer description.")


Allowed = Callable[[dict], bool]


def find_memory(services, scope: Scope, reference: str, allowed: Allowed | None = None) -> Found:
    """The memory of `scope` that `reference` (an id or a description) names; see the module docstring.
    `allowed(record)`: the caller's own check of each record (a door's principal), behind the scope's."""
    ok = allowed or (lambda _record: True)
    if not isinstance(reference, str) or not reference.strip():
        raise InvalidInputError("a memory reference must be a non-empty id or description")
    ref = reference.strip()
    try:
        row = services.sql.get_memory(ref, scope=scope)
        if ok(row):
            return Found(ref, memory=row)
    except (NotFoundError, InvalidInputError):
        pass  # not an id of this scope (or not one the caller may see): read it as a description
    vector = services.embeddings.embed_query(ref)
    hits = services.vectors.search_memories_batch([vector], scope, limit=CANDIDATES, threshold=MIN_COSINE,
                                                  filters=visible_filter())[0]
    score = {str(h.id): float(h.score) for h in hits}
    rows = [r for r in services.sql.get_memories(list(score)) if scope.contains(r) and ok(r)]
    rows.sort(key=lambda r: -score[r["id"]])
    if not rows:
        return Found(ref)
    same = [r for r in rows if r["memory"].strip().casefold() == ref.casefold()]
    if len(same) == 1:
        return Found(ref, memory=same[0])
    close = [r for r in rows if score[r["id"]] >= score[rows[0]["id"]] - AMBIGUITY_MARGIN]
    if len(close) == 1:
        return Found(ref, memory=close[0])
    return Found(ref, candidates=[{"id": r["id"], "memory": r["memory"], "cosine": round(score[r["id"]], 3)}
                                  for r in close])


def link_described(services, scope: Scope, source: str, target: str, relation: str, *, importance: float = 0.6,
                   actor: str = "agent", allowed: Allowed | None = None) -> dict:
    """{"status": "linked", "link", "source", "target"} or {"status": "ask", "question", "source"|"target":
    candidates}: the link is written only when both references name one memory each."""
    found = {"source": find_memory(services, scope, source, allowed),
             "target": find_memory(services, scope, target, allowed)}
    unclear = {role: f for role, f in found.items() if f.memory is None}
    if unclear:
        return {"status": "ask", "question": " ".join(f.question(role) for role, f in unclear.items()),
                **{role: f.candidates for role, f in unclear.items()}}
    a, b = found["source"].memory, found["target"].memory
    link = services.sql.link_memories(scope, a["id"], b["id"], relation, importance=importance, actor=actor)
    return {"status": "linked", "link": link, "source": {"id": a["id"], "memory": a["memory"]},
            "target": {"id": b["id"], "memory": b["memory"]}}


__all__ = ["AMBIGUITY_MARGIN", "MIN_COSINE", "Found", "find_memory", "link_described"]
