"""What a query says, without a model: its normalised text, the strings that could name an entity, the
capitalised words that look like names; and the optional model step that rewrites it.

graph_recall matches `entity_candidates` exactly (normalised) against the scope's entities with
`SQLStore.find_entities_by_names` - one SQL query, no model, in parallel with the query embedding.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any

from memoryx.core import lexicon
from memoryx.core.text import CJK_CLASS, KANA
from memoryx.errors import InvalidInputError
from memoryx.models.llm_io import call_with_retry, extract_json, message_text
from memoryx.prompts.search import RETRY_REWRITE_PROMPT, REWRITE_QUERY_PROMPT, QueryRewrite

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

MAX_ENTITY_CANDIDATES = 400


def normalize_query(query: Any) -> str:
    if query is None:
        return ""
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
    return " ".join(unicodedata.normalize("NFKC", query).split())


# a question asked as a request to recall ("Do you remember my dog's name?", "Remind me, what does my wife do?",
# "Can you tell me again where I parked?"): what is asked is what follows
_RECALL_REQUEST = lexicon.pattern("search.recall_request", flags=re.I)


def without_recall_request(query: str) -> str:
    """The question without the request to recall around it: "Do you remember my name?" -> "my name?",
    "Remind me, what does my boyfriend do?" -> "what does my boyfriend do?"; the query itself when nothing is
    left."""
    rest = _RECALL_REQUEST.sub("", query, count=1).strip()
    return rest if len(rest) >= 2 else query


# the words that make a Chinese or Japanese sentence a question ("什么", "哪里", "吗", "何", "どこ", "だっけ"): the
# keyword path matches characters and their pairs, and these would match any memory saying "什么口味" or "どこか"
_CJK_QUESTION_WORDS = lexicon.matcher("search.question_word").pattern


def without_cjk_question_words(query: str) -> str:
    """The keyword query of a Chinese or Japanese question without its question words ("我现在一般是什么时候去打球"
    -> "我现在是去打球"); the query itself when nothing would be left."""
    rest = _CJK_QUESTION_WORDS.sub(" ", query).strip()
    return rest if len(rest) >= 2 else query


_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_LATIN_WORD = re.compile(rf"(?:(?![{CJK_CLASS}])[^\W_])+(?:['’.\-](?:(?![{CJK_CLASS}])[^\W_])+)*")
_POSSESSIVE = lexicon.pattern("search.possessive_ending")  # "Melanie's" -> "Melanie"


def entity_candidates(query: str, max_words: int = 4, max_chars: int = 8) -> list[str]:
    """Word n-grams (1..4 words) and CJK character n-grams (1..8 chars) of the query: every string that could
    be an entity name, to be matched exactly (after normalisation) against the scope's entities."""
    text = unicodedata.normalize("NFKC", query)
    out: dict[str, None] = {}
    # latin-like words, kept in order; possessive 's removed ("Melanie's" -> "Melanie")
    words = [_POSSESSIVE.sub("", w) for w in _LATIN_WORD.findall(text)]
    for n in range(1, max_words + 1):
        for i in range(len(words) - n + 1):
            out[" ".join(words[i : i + n])] = None
    for run in _CJK_RUN.findall(text):
        for n in range(1, min(max_chars, len(run)) + 1):
            for i in range(len(run) - n + 1):
                out[run[i : i + n]] = None
    cands = [c for c in out if c.strip()]
    return cands[:MAX_ENTITY_CANDIDATES]


def english_encoder(model: str) -> bool:
    """The embedding model was trained on English only (the default MiniLM, not a multilingual one)."""
    name = model.lower()
    return "minilm" in name and "multilingual" not in name and "paraphrase" not in name


_LATIN_LETTERS = re.compile(r"[A-Za-z]{2}")


def written_in_cjk(query: str) -> bool:
    """A query in Chinese or Japanese, no word of it in Latin letters."""
    return bool(_CJK_RUN.search(query)) and not _LATIN_LETTERS.search(query)


def _read_rewrite(answer: BaseMessage) -> QueryRewrite:
    data = extract_json(message_text(answer))
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    return QueryRewrite.model_validate(data)


def rewrite_query(llm: Any, query: str) -> QueryRewrite:
    """Optional model step: the query rewritten for search, with extra entity names and keywords. Raises
    RetriesExhausted (memoryx.models.llm_io) when the model's answers cannot be read."""
    from langchain_core.messages import HumanMessage, SystemMessage  # the chat-model stack: only when rewriting

    messages = [SystemMessage(content=REWRITE_QUERY_PROMPT), HumanMessage(content=query)]
    return call_with_retry(llm, messages, _read_rewrite, retry_prompt=RETRY_REWRITE_PROMPT).value


# ---- the user's own names ---------------------------------------------------------------------
# Facts about the user are stored as "User lives in X" / "用户住在X" / "ユーザーはXに住んでいる", and only the name
# fact itself holds the user's name: asked "Where does Alice live?", the name fact would outrank the answer.
# The user's profile names are therefore read as the user: replaced by the self word of the query's language.

SELF_WORDS = {lang: lexicon.table("search.user_word", lang)[0] for lang in lexicon.LANGUAGES}
_I = {lang: lexicon.table("search.first_person", lang)[0] for lang in lexicon.LANGUAGES}  # I, 我, 私
_MY = lexicon.table("search.first_person_possessive", "en")[0]


def as_first_person(query: str, names: list[str]) -> str:
    """The query as the user would ask it of themselves, when it names them by one of their own names: "Where does
    Alice live?" -> "Where does I live?", "Alice's dog" -> "my dog", "小明住在哪里" -> "我住在哪里"; what reads a
    question about the user ("my ...", "do I ...": memoryx.search.relation_terms, speakers, current) then reads it."""
    out = query
    for name in sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True):
        if _CJK_RUN.fullmatch(name):
            out = out.replace(name, _I["ja"] if KANA.search(out) else _I["zh"])
            continue
        out = re.sub(rf"(?<![\w]){re.escape(name)}(?:'s|’s)(?![\w])", _MY, out, flags=re.I)
        out = re.sub(rf"(?<![\w]){re.escape(name)}(?![\w])", _I["en"], out, flags=re.I)
    return out


def resolve_self_names(query: str, names: list[str]) -> tuple[str, list[str]]:
    """(query with each of the user's own names replaced by User / 用户 / ユーザー, the names it contained)."""
    lang = "ja" if KANA.search(query) else "zh" if _CJK_RUN.search(query) else "en"
    found: list[str] = []
    out = query
    for name in sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True):
        word = SELF_WORDS["en"] if lang == "en" else SELF_WORDS[lang]
        if _CJK_RUN.fullmatch(name):
            if name in out:
                found.append(name)
                out = out.replace(name, word)
            continue
        pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])", re.I)  # whole words: "Al" is not in "Alice"
        if pattern.search(out):
            found.append(name)
            out = pattern.sub(word, out)
    return out, found
