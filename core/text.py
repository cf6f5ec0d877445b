"""Text: the one home of normalisation (duplicate identity, entity names), the CJK character class, and the
tokenizer with sparse (BM25-style) vectors for keyword search.

The keyword path of search stores, next to the dense embedding, a sparse vector per memory: hashed token
ids with BM25-saturated term frequencies. The IDF half of BM25 is computed by Qdrant itself
(`Modifier.IDF` on the sparse vector config), so the scores follow the collection's real statistics and
nothing here needs a corpus.

Tokenisation is deliberately dependency-free and language-agnostic:

* Latin/Cyrillic/... words and numbers: NFKC, lowercase, a small English stop-word list, light stemming
  (plural ``s``/``ies``, possessive ``'s``, ``-ing``/``-ed``, a final silent ``e``). A store indexed by an
  older tokenizer keeps its old sparse vectors until `reindex` rewrites them.
* CJK runs (Han ideographs, Japanese hiragana/katakana, Korean Hangul): character unigrams + bigrams, the
  usual segmentation-free approach for Chinese/Japanese BM25. Katakana runs (loan words such as
  ``コーヒー``) are also kept as one whole token. A few very frequent single-character function words
  (的, 了, の, は, ...) are dropped as unigrams (they stay inside bigrams).

Why no word segmenter, morphological analyser or Snowball stemmer: each was measured against this tokeniser
on the keyword path alone (bench/recall/keyword_tokenizers.py, docs/benchmarks.md) and none did better on both
the dev and the validation data. A short memory shares characters with its question more often than whole
words (部署 / 署, 保育園 / 保育园); the analysers' parts of speech can stand in for the stop tables below at equal
recall, but not better (and through the search, worse in Japanese), for 5 to 250 MB of dictionaries.

`KEYWORD_TOKENIZER` names the tokens this module gives. The keyword vectors are made when a memory is written,
so a store keeps the tokens of the version that wrote it: each point records the version
(`KEYWORD_TOKENIZER_FIELD`), and a search that meets points of another version says once, in the log, to run
`memoryx reindex` (their keyword scores no longer meet the query's tokens).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import unicodedata
import zlib
from functools import lru_cache
from typing import Iterable

log = logging.getLogger(__name__)

__all__ = ["tokenize", "sparse_vector", "query_sparse_vector", "normalize_name", "normalize_text", "fact_key",
           "memory_hash", "token_id", "estimate_tokens", "CJK_CLASS", "CJK_CHAR", "KANA", "BM25_K1", "BM25_B",
           "BM25_AVG_LEN", "KEYWORD_TOKENIZER", "KEYWORD_TOKENIZER_FIELD", "warn_stale_keywords"]

# The version of what `tokenize` and `token_id` give a text. Any change to the tokens of some text (a stop word,
# a stemming rule, a table, an analyser) must raise it: stores written before hold the old tokens
# (tests/core/test_tokenizers.py pins a sample's tokens to this number).
KEYWORD_TOKENIZER = 1
# The payload field of a memory point that holds the version its keyword vector was made with (absent: 1, the
# points written before the version was recorded).
KEYWORD_TOKENIZER_FIELD = "keyword_tokenizer"

# BM25 constants. Qdrant multiplies each stored weight by its IDF at query time (Modifier.IDF); the document
# length normalisation uses a fixed average length because memories are short, single facts.
BM25_K1 = 1.2
BM25_B = 0.3  # chat turns vary in length a lot; strong length normalisation hurt recall on LoCoMo
BM25_AVG_LEN = 12.0

CJK_CLASS = (
    "\u1100-\u11ff"          # Hangul Jamo
    "\u3040-\u309f"          # Hiragana
    "\u30a0-\u30ff"          # Katakana (incl. prolonged sound mark)
    "\u3130-\u318f"          # Hangul compatibility Jamo
    "\u31f0-\u31ff"          # Katakana phonetic extensions
    "\u3400-\u4dbf"          # CJK extension A
    "\u4e00-\u9fff"          # CJK unified ideographs
    "\uac00-\ud7af"          # Hangul syllables
    "\uf900-\ufaff"          # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK extensions B-G
)
# One CJK character (Han, kana, Hangul): what tokenisation, entity candidates and name checks agree on.
CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
# One kana (hiragana or katakana): the text is Japanese, not Chinese.
KANA = re.compile(r"[\u3040-\u30ff]")
_KATAKANA_RUN = re.compile("[\u30a0-\u30ff\u31f0-\u31ff]{2,}")
_TOKEN_RE = re.compile(
    rf"(?P<cjk>[{CJK_CLASS}]+)"
    rf"|(?P<num>\d+(?:[.,]\d+)+)"
    rf"|(?P<word>[^\W_{CJK_CLASS}]+(?:['’][^\W_{CJK_CLASS}]+)*)"
)

STOP_WORDS = frozenset(
    """
    a an the and or but nor of to in on at for with by from as into onto about over under than then so if
    is am are was were be been being do does did done have has had having will would shall should can could
    may might must it its this that these those there here i me my mine myself you your yours we us our ours
    he him his she her hers they them their theirs what which who whom whose how when where why
    not no very just also too now s t
    """.split()
)
# Single CJK characters that carry almost no meaning alone (kept inside bigrams).
CJK_STOP_CHARS = frozenset("的了是在和与及或也就都而着过吗呢吧啊呀么之其这那个们を" "のはがにでともへやかなねよ")
# Japanese writes its grammar in hiragana: a lone hiragana is an inflection or a particle, and these pairs are
# the verb endings and particles every sentence has (住んでいますか, しています share います): like English stop
# words, they would match every Japanese memory. Hiragana pairs outside the list (すし, りんご) stay.
_HIRAGANA = re.compile("[\u3040-\u309f]")
JA_GRAMMAR_PAIRS = frozenset("""
    ます いま すか です でし まし した して ませ せん てい でい いる いた って った ない ある あり りま
    から まで ので けど こと もの よう など とい いう られ れる れた たい たち ださ くだ
""".split())


@lru_cache(maxsize=16384)  # bounded for long-running servers (bench/bench_rss.py: 65,536 entries held ~9 MB)
def _word_token(word: str) -> str | None:
    """Stop-word removal + light stemming of one lowercase word (cached: vocabularies are small)."""
    if word in STOP_WORDS:
        return None
    word = _keyword_stem(word)
    return word if word and word not in STOP_WORDS else None


_VOWEL = re.compile("[aeiouy]")


def _stem(word: str) -> str:
    """Plurals and possessives off (cities -> city, Alice's -> alice): a form still fit to show (profiles'
    topics use it)."""
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    word = word.replace("'", "").replace("’", "")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _keyword_stem(word: str) -> str:
    """The BM25 form, the same for documents and queries: `_stem`, then the verb endings -ing / -ed (a doubled
    final consonant undone: running, stopped) and a final silent e, so that bake / baking / baked and hike /
    hiking meet. Words of other scripts pass through (no English endings)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    word = _stem(word)
    if len(word) > 4 and word.endswith("ied"):
        return word[:-3] + "y"
    for ending in ("ing", "ed"):
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 3 and not word.endswith("eed") and _VOWEL.search(stem):
            if stem[-1] == stem[-2] and stem[-1] not in "lsz" and not stem[-1].isdigit():
                stem = stem[:-1]
            word = stem
            break
    if len(word) > 3 and word.endswith("e") and word[-2] != "e":
        word = word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Tokens of `text` in order (with repeats). Same function for documents and queries."""
    if not text:
        return []
    text = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for m in _TOKEN_RE.finditer(text):
        run = m.group("cjk")
        if run is not None:
            for i, ch in enumerate(run):
                if ch not in CJK_STOP_CHARS and ch != "ー" and not _HIRAGANA.match(ch):
                    out.append(ch)
                if i + 1 < len(run) and run[i : i + 2] not in JA_GRAMMAR_PAIRS:
                    out.append(run[i : i + 2])
            if len(run) > 2:
                out.extend(k.group(0) for k in _KATAKANA_RUN.finditer(run) if len(k.group(0)) > 2)
            continue
        num = m.group("num")
        if num is not None:
            out.append(num.replace(",", ""))
            continue
        word = m.group("word")
        if word is not None:
            tok = _word_token(word)
            if tok:
                out.append(tok)
    return out


@lru_cache(maxsize=16384)  # ~3 MB: a 262,144-entry cache grew to ~47 MB in a server fed varied text, to save
def token_id(token: str) -> int:  # ~0.4 µs per token (bench/bench_rss.py)
    """Stable hashed id of a token (same across processes and machines)."""
    return zlib.crc32(token.encode("utf-8")) & 0x7FFFFFFF


def sparse_vector(text: str) -> tuple[list[int], list[float]]:
    """Document-side sparse vector: (sorted token ids, BM25-saturated term frequencies).

    weight = tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avg_len)); the IDF factor is applied by
    Qdrant (`Modifier.IDF`) at query time. Empty or stop-word-only text gives ([], []).
    """
    tokens = tokenize(text)
    if not tokens:
        return [], []
    counts: dict[int, int] = {}
    for t in tokens:
        i = token_id(t)
        counts[i] = counts.get(i, 0) + 1
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(tokens) / BM25_AVG_LEN)
    k1p1 = BM25_K1 + 1.0
    ids = sorted(counts)
    return ids, [counts[i] * k1p1 / (counts[i] + norm) for i in ids]


def warn_stale_keywords(payloads: Iterable[dict]) -> bool:
    """Whether some of these keyword hits' points were made by another version of the tokenizer, saying so in
    the log: their keyword vectors share few tokens with the query's, so keyword recall misses them without
    an error until `memoryx reindex` rebuilds them."""
    found = {(p or {}).get(KEYWORD_TOKENIZER_FIELD, 1) for p in payloads} - {KEYWORD_TOKENIZER}
    if found:
        log.warning("this store holds keyword vectors made by keyword tokenizer %s; this MemoryX tokenizes as "
                    "version %s, so keyword search misses those memories. Run `memoryx reindex` (or "
                    "Memory.reindex()) once to rebuild them.", sorted(found), KEYWORD_TOKENIZER)
    return bool(found)


EXTRA_WEIGHT = 0.5  # a word the query was widened with (memoryx.search.relation_terms) counts half its own


def _extra_tokens(extra: str) -> list[str]:
    """The tokens of the extra words: a CJK word of two or more characters by its pairs only - its single
    characters ("上" of 上班) match far more than the word does (晚上)."""
    out: list[str] = []
    for word in (extra or "").split():
        toks = tokenize(word)
        if len(word) > 1 and _TOKEN_CJK.fullmatch(word[0]):
            toks = [t for t in toks if len(t) > 1] or toks
        out.extend(toks)
    return out


def query_sparse_vector(text: str, extra: str = "") -> tuple[list[int], list[float]]:
    """Query-side sparse vector: every distinct query token with weight 1 (BM25 sums IDF * doc weight), and the
    tokens only `extra` has (other words for what the query names) with EXTRA_WEIGHT."""
    own = {token_id(t) for t in tokenize(text)}
    weights = {i: EXTRA_WEIGHT for i in (token_id(t) for t in _extra_tokens(extra)) if i not in own}
    weights.update((i, 1.0) for i in own)
    ids = sorted(weights)
    return ids, [weights[i] for i in ids]


_SPACES = re.compile(r"\s+")


def normalize_name(name: str) -> str:
    """Canonical form of an entity name: NFKC, lowercase, '_' -> ' ', trimmed, single spaces."""
    name = unicodedata.normalize("NFKC", name or "").replace("_", " ").lower()
    return _SPACES.sub(" ", name).strip()


def normalize_text(text: str) -> str:
    """NFKC, lowercase, trimmed, whitespace collapsed: the form two memories must share to be duplicates."""
    return " ".join(unicodedata.normalize("NFKC", text or "").lower().split())


def memory_hash(text: str) -> str:
    """md5 of the normalised text; callers use it with `SQLStore.find_by_hash`."""
    return hashlib.md5(normalize_text(text).encode("utf-8")).hexdigest()


_PUNCTUATION_RUN = re.compile(r"[\s\.,;:!?。，！？；：\"'“”‘’]+")


def fact_key(text: str) -> str:
    """Looser identity than `normalize_text`: punctuation ignored too, so "I live in Rome." matches the
    fact "I live in Rome" when a model's answer is matched back to the facts it was shown."""
    t = unicodedata.normalize("NFKC", text or "").lower().strip()
    return _PUNCTUATION_RUN.sub(" ", t).strip()


# CJK characters and full-width forms each count as one token.
_TOKEN_CJK = re.compile(f"[{CJK_CLASS}\uff00-\uffef]")
_WORDISH = re.compile(r"\S+")


def estimate_tokens(text: str) -> int:
    """Token estimate that works across scripts: CJK characters count one each, the rest ~4 chars per token
    (at least one per word)."""
    if not text:
        return 0
    cjk = len(_TOKEN_CJK.findall(text))
    rest = _TOKEN_CJK.sub(" ", text)
    words = _WORDISH.findall(rest)
    chars = sum(len(w) for w in words)
    return cjk + max(len(words), math.ceil(chars / 4))
