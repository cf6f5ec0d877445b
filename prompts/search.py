"""Prompts of the search graph's optional model steps, each beside the model of its answer.

- Query rewriting (MEMORYX_SEARCH_REWRITE or `rewrite: true`): a short search query in the question's own
  language, the names it mentions and a few extra keywords.
- Reranking with a chat model (MEMORYX_RERANKER=<provider:model>): a 0-10 usefulness score per memory.

Neither prompt carries a `[memoryx-task: ...]` tag: the offline model does not play these steps, and a failed
step leaves the search as it would be without it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

MAX_REWRITE_TERMS = 20

REWRITE_QUERY_PROMPT = (
    "Rewrite the user's question into a short search query for a personal memory store, in the question's "
    "own language. Also list the names of people, places, organisations or things it mentions, and a few "
    'extra keywords (synonyms). Answer with JSON only: {"query": "...", "entities": ["..."], '
    '"keywords": ["..."]}'
)

RETRY_REWRITE_PROMPT = ('Your answer could not be used: {error}. Answer again with only the JSON object '
                        '{{"query": "...", "entities": [...], "keywords": [...]}}.')


class QueryRewrite(BaseModel):
    """The rewrite model's answer; blank or non-string entries are dropped, at most 20 of each list."""

    query: str | None = None
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)

    @field_validator("query", mode="before")
    @classmethod
    def _query(cls, value: Any) -> str | None:
        return value.strip() or None if isinstance(value, str) else None

    @field_validator("entities", "keywords", mode="before")
    @classmethod
    def _terms(cls, value: Any) -> list[str]:
        if not isinstance(value, list):
            return []
        return [v.strip() for v in value if isinstance(v, str) and v.strip()][:MAX_REWRITE_TERMS]

    @property
    def empty(self) -> bool:
        return not (self.query or self.entities or self.keywords)


RERANK_PROMPT = ("Rate how useful each memory is for answering the question, from 0 (useless) to 10 (answers "
                 'it). Answer with JSON only: {"scores": [n, n, ...]}, one score per memory, in the order given.')

RETRY_RERANK_PROMPT = ('Your answer could not be used: {error}. Answer again with only the JSON object '
                       '{{"scores": [n, n, ...]}}, one number per memory.')


def format_rerank_input(query: str, texts: list[str]) -> str:
    listing = "\n".join(f"{i}. {t}" for i, t in enumerate(texts))
    return f"Question: {query}\n\nMemories:\n{listing}"


class RerankScores(BaseModel):
    """The rerank model's answer: one 0-10 score per memory, in order."""

    scores: list[float]
