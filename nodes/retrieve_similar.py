"""retrieve_similar: the existing memories the judge must see.

All facts are embedded in ONE batch; for each fact the top-k memories of the same scope above the
similarity threshold are fetched (Context.similar_top_k / similarity_threshold); hits are deduplicated,
re-read from SQL (the system of record: a memory deleted since its projection is not shown), and their real
ids are replaced by small integers ("0", "1", ...) for the model.

Tenancy: every candidate lies in the fact's owner scope AND has exactly that scope's user (None for the
agent-global scope): the stores treat an unset scope field as a wildcard, so without this an agent fact
searched in Scope(agent_id=bot) would show bob's (bob, bot) memories to alice's judge. When a user and an
agent are named, user facts see user memories and agent facts see the agent's own (metadata owner "agent"),
both in the user's tenancy unless the caller chose agent_memory="global". Next to the dense path, the best keyword (BM25) matches sharing a content word with
the fact are shown too (see search_similar): they are what surfaces the old value of a single-valued
attribute, which embeddings rank below the threshold.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.filters import And, parse_filters
from memoryx.core.runs import (
    change_marker,
    elapsed_ms,
    is_agent_memory,
    keeps_agent_facts,
    same_tenant,
    scope_for_owner,
)
from memoryx.core.text import tokenize
from memoryx.core.timeparse import base_time
from memoryx.ingest.add_options import is_immutable
from memoryx.knowledge.importance import confidence, evaluate, source_of
from memoryx.lifecycle.state import visible_filter
from memoryx.runtime.context import Context, context_of, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

KEYWORD_TOP_K = 3  # keyword (BM25) candidates per fact, next to the dense top-k


def all_facts(state: dict) -> list[dict]:
    """User facts then agent facts: the fact numbering shared by the judge prompt and fact_vectors."""
    return list(state.get("facts") or []) + list(state.get("agent_facts") or [])


# Subject words every memory shares: a keyword hit must share something else with the fact.
_SUBJECT_TOKENS = {"user", "the", "s", "用", "户", "用户", "ユーザー", "ユ", "ユー", "ーザ", "ザ", "ザー", "ーは", "は"}


def _content_tokens(text: str) -> set[str]:
    return set(tokenize(text)) - _SUBJECT_TOKENS


def _candidate_filter(scope, owner: str, agent_apart: bool):
    """The store-side filter of one fact's search: the scope's own user (user_id empty for the agent-global
    scope, so other tenants never fill the top-k) and, when agent facts are kept apart, the owner's kind."""
    conds: list[dict] = []
    if scope.user_id is None and scope.group_id is None:  # a group's scope holds its participants' memories
        conds.append({"user_id": None})
    if agent_apart:
        conds.append({"metadata.owner": "agent"} if owner == "agent" else {"metadata.owner": {"ne": "agent"}})
    # merged and archived memories are not live facts: the judge must not update or delete them
    hidden = visible_filter(include_archived=False)
    return And((parse_filters({"AND": conds}), hidden)) if conds else hidden


def _admissible(record: dict, scope, owner: str, agent_apart: bool) -> bool:
    """The same rule on a stored record (payload or SQL row): checked again after every store query."""
    if not same_tenant(record, scope):
        return False
    return not agent_apart or is_agent_memory(record) == (owner == "agent")


def search_similar(services, state: dict, facts: list[dict], vectors: list[list[float]], *, top_k: int,
                   threshold: float, nearest: dict[int, float] | None = None) -> list[tuple[str, str, float]]:
    """[(memory id, owner, score)] for every fact, in the scope (and tenancy) of the fact's owner.
    `nearest`, when given, receives {fact index: the highest similarity to any admissible memory of its
    owner}, threshold or not (the scarcity of the fact: memoryx.knowledge.importance).

    Two paths: dense top-k above the similarity threshold, and the best KEYWORD_TOP_K keyword (BM25) hits
    sharing a content word with the fact. Embeddings alone miss most single-valued updates ("User lives in
    Paris" vs "User lives in Berlin": cosine 0.67 with all-MiniLM-L6-v2; "用户在腾讯工作" vs
    "用户在阿里巴巴工作": 0.44), which is how mem0 ends up with contradicting memories side by side.
    Keyword hits carry score 0.0 (they were not above the dense threshold).
    """
    agent_apart = keeps_agent_facts(state)
    # One planned batch per owner (the facts of one owner share scope and filter): the dense and the keyword
    # queries of all facts in two store calls instead of two per fact (at 10k memories in one scope, each
    # query scans them all; a batch shares the call).
    dense: dict[int, list] = {}
    keyword: dict[int, list] = {}
    words_of = {i: _content_tokens(f["text"]) if KEYWORD_TOP_K > 0 else set() for i, f in enumerate(facts)}
    by_owner: dict[str, list[int]] = {}
    for i, fact in enumerate(facts[:len(vectors)]):
        by_owner.setdefault(fact.get("owner", "user"), []).append(i)
    for owner, idx in by_owner.items():
        scope = scope_for_owner(state, owner)
        flt = _candidate_filter(scope, owner, agent_apart)
        # no threshold in the store: the best hit below it still measures how new the fact is
        found = services.vectors.search_memories_batch([vectors[i] for i in idx], scope, limit=top_k,
                                                       threshold=None, filters=flt)
        dense.update(zip(idx, found))
        asked = [i for i in idx if words_of[i]]
        if asked:
            found = services.vectors.keyword_search_batch([facts[i]["text"] for i in asked], scope,
                                                          limit=KEYWORD_TOP_K, filters=flt)
            keyword.update(zip(asked, found))
    hits: list[tuple[str, str, float]] = []
    for i in range(min(len(facts), len(vectors))):  # per fact: its dense hits, then its keyword hits
        owner = facts[i].get("owner", "user")
        scope = scope_for_owner(state, owner)
        for hit in dense.get(i, []):
            if _admissible(hit.payload or {}, scope, owner, agent_apart):
                if nearest is not None:
                    nearest[i] = max(nearest.get(i, 0.0), float(hit.score))
                if threshold is None or float(hit.score) >= threshold:
                    hits.append((str(hit.id), owner, float(hit.score)))
        for hit in keyword.get(i, []):
            payload = hit.payload or {}
            if _admissible(payload, scope, owner, agent_apart) and _content_tokens(str(payload.get("text") or "")) & words_of[i]:
                hits.append((str(hit.id), owner, 0.0))
    return hits


def weigh_facts(state: dict, facts: list[dict], nearest: dict[int, float]) -> tuple[list[dict], list[dict]]:
    """The facts with their reasoned importance, its four factors and their confidence (user facts, agent
    facts). The event time is the fact's own date, else the time of the last message, else now."""
    stamps = [m["timestamp"] for m in state.get("normalized_messages") or [] if m.get("timestamp")]
    said_at = base_time(stamps[-1]) if stamps else None
    weighed = []
    for i, fact in enumerate(facts):
        event = base_time(fact["valid_at"]) if fact.get("valid_at") else said_at
        importance, factors = evaluate(fact["text"], fact.get("memory_type"), max_similarity=nearest.get(i),
                                       event_time=event, judged_certainty=fact.get("certainty"))
        weighed.append({**fact, "importance": importance, "importance_factors": factors,
                        "confidence": confidence(factors["certainty"], source_of(fact))})
    split = len(state.get("facts") or [])
    return weighed[:split], weighed[split:]


def retrieve_similar(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    with services.sql.transaction(write=False):  # the marker and the rows: one read transaction
        return _retrieve(state, runtime, services, start)


def _retrieve(state: AddState, runtime: Runtime[Context], services, start: float) -> dict:
    marker = change_marker(services.sql)  # read BEFORE searching: any later write changes it
    ctx = context_of(runtime)
    facts = all_facts(state)
    vectors = state.get("fact_vectors")
    if not vectors or len(vectors) != len(facts):  # a stale retry reuses the vectors computed the first time
        vectors = [list(map(float, v)) for v in services.embeddings.embed_documents([f["text"] for f in facts])]
    t_embed = elapsed_ms(start)

    nearest: dict[int, float] = {}
    hits = search_similar(services, state, facts, vectors, top_k=ctx.similar_top_k, threshold=ctx.similarity_threshold,
                          nearest=nearest)
    user_facts, agent_facts = weigh_facts(state, facts, nearest)
    best: dict[str, tuple[str, float]] = {}
    for memory_id, owner, score in hits:
        if memory_id not in best or score > best[memory_id][1]:
            best[memory_id] = (owner, score)
    ordered = sorted(best, key=lambda mid: -best[mid][1])
    rows = {r["id"]: r for r in services.sql.get_memories(ordered)} if ordered else {}
    agent_apart = keeps_agent_facts(state)
    candidates = []
    for memory_id in ordered:
        row = rows.get(memory_id)
        if row is None:
            continue  # deleted since it was projected
        owner, score = best[memory_id]
        if not _admissible(row, scope_for_owner(state, owner), owner, agent_apart):
            continue  # the system of record decides: another tenant's text never reaches the judge
        # immutable (mem0's option) read here with the row: the judge's guard needs no second read
        candidates.append({"ref": str(len(candidates)), "id": memory_id, "memory": row["memory"], "owner": owner,
                           "score": round(score, 4), "immutable": is_immutable(row),
                           "confidence": row.get("confidence")})
    return {"fact_vectors": vectors, "candidates": candidates, "stale": False, "change_marker": marker,
            "facts": user_facts, "agent_facts": agent_facts,
            "timings": {"retrieve_similar": elapsed_ms(start), "embed_facts": t_embed}}
