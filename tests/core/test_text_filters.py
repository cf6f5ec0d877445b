"""Tokenizer, sparse vectors, mem0-style filters, and the embeddings factory (no model loading here)."""

from __future__ import annotations

import zlib
from datetime import datetime, timezone

import pytest

from memoryx.core.filters import And, Cond, Not, Or, matches, parse_filters
from memoryx.core.text import normalize_name, query_sparse_vector, sparse_vector, token_id, tokenize
from memoryx.errors import InvalidInputError

# ----------------------------------------------------------------------------------------------- tokenizer

def test_tokenize_english_lowercase_stopwords_and_plurals():
    toks = tokenize("The Cats and the DOGS of Alice's cities")
    assert toks == ["cat", "dog", "alic", "city"]
    assert tokenize("glass bus this") == ["glass", "bus"]  # no over-stemming of -ss/-us/-is
    # verb forms meet: what a question asks in one form, a memory may say in another
    assert len(set(tokenize("bake baking baked bakes"))) == 1
    assert tokenize("running runs stopped stops studied studies") == ["run", "run", "stop", "stop", "study", "study"]
    assert tokenize("hiking hiked hike") == ["hik"] * 3 and tokenize("falling fall") == ["fall", "fall"]
    assert tokenize("speed need bed red sing free") == ["speed", "need", "bed", "red", "sing", "free"]
    assert tokenize("") == [] and tokenize("the and of") == []


def test_tokenize_digits_and_mixed():
    assert tokenize("Flight UA857 on 2024-05-01 costs 1,299.50") == ["flight", "ua857", "2024", "05", "01",
                                                                     "cost", "1299.50"]
    assert tokenize("ｈｅｌｌｏ１２３") == ["hello123"]  # NFKC full-width


def test_tokenize_chinese_unigrams_and_bigrams():
    toks = tokenize("我住在北京")
    for t in ("北京", "北", "京", "住在", "我住"):
        assert t in toks
    assert "在" not in toks  # single-character function word dropped as a unigram (kept in bigrams)
    assert set(tokenize("北京")) <= set(toks)
    # Latin and CJK in one string are split at the script boundary
    assert tokenize("iPhone手机") == ["iphon", "手", "手机", "机"]


def test_tokenize_japanese_and_korean():
    toks = tokenize("私はコーヒーが好きです")
    assert "コーヒー" in toks and "好き" in toks and "コー" in toks
    assert "は" not in toks  # particle dropped as a unigram
    assert "서울" in tokenize("저는 서울에 살아요")


def test_japanese_grammar_matches_nothing():
    """Verb endings and lone hiragana are Japanese's stop words: a question ending in ますか shares no token with
    an unrelated memory ending in ています; content in hiragana (すし) is kept."""
    question, other = set(tokenize("私はどこに住んでいますか？")), set(tokenize("週末は山登りをしています"))
    assert "住" in question and "住ん" in question and "週末" in other
    assert not question & other
    assert "すし" in tokenize("すしが好きです") and "い" not in tokenize("います")


def test_sparse_vector_stable_ids_and_bm25_saturation():
    ids, vals = sparse_vector("paris")
    assert ids == [zlib.crc32(b"paris") & 0x7FFFFFFF] == [token_id("paris")]
    assert sparse_vector("") == ([], [])
    ids, vals = sparse_vector("paris paris london")
    w = dict(zip(ids, vals))
    assert ids == sorted(ids)
    assert w[token_id("london")] < w[token_id("paris")] < 2 * w[token_id("london")]  # tf saturates
    # longer documents weigh a term less (length normalisation)
    short = dict(zip(*sparse_vector("paris")))[token_id("paris")]
    long = dict(zip(*sparse_vector("paris " + " ".join(f"word{i}" for i in range(30)))))[token_id("paris")]
    assert long < short
    assert query_sparse_vector("paris paris london") == (sorted([token_id("paris"), token_id("london")]), [1.0, 1.0])


def test_normalize_name():
    assert normalize_name("  Alice_Smith   JR ") == "alice smith jr"
    assert normalize_name("ＡＢＣ") == "abc"
    assert normalize_name("北京") == "北京"


# -------------------------------------------------------------------------------------------------- parsing

def test_parse_shapes():
    assert parse_filters(None) is None and parse_filters({}) is None
    assert parse_filters({"city": "Paris"}) == Cond("metadata.city", "eq", "Paris")
    assert parse_filters({"memory_type": "episodic"}) == Cond("memory_type", "eq", "episodic")
    assert parse_filters({"city": ["a", "b"]}) == Cond("metadata.city", "in", ("a", "b"))
    node = parse_filters({"n": {"gte": 1, "lt": 5}, "city": {"ne": "Rome"}})
    assert isinstance(node, And) and len(node.children) == 2
    node = parse_filters({"OR": [{"a": 1}, {"NOT": [{"b": 2}]}]})
    assert isinstance(node, Or) and isinstance(node.children[1], Not)
    c = parse_filters({"created_at": {"gte": "2024-01-01T00:00:00Z"}})
    assert c == Cond("created_at", "gte", datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp())
    assert parse_filters({"created_at": {"lt": datetime(2024, 1, 1)}}).value == c.value  # naive = UTC
    assert parse_filters({"metadata.category": "x"}) == Cond("metadata.category", "eq", "x")


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"city": {"like": "P%"}}, ["'like'", "eq, ne, gt, gte, lt, lte, in, nin, contains"]),
        ({"city": {"in": "Paris"}}, ["'in'", "list", "Allowed operators"]),
        ({"n": {"gt": {"x": 1}}}, ["'gt'", "number", "Allowed operators"]),
        ({"n": {"gt": "5"}}, ["'gt'", "number"]),
        ({"n": {"nin": [{"a": 1}]}}, ["'nin'"]),
        ({"city": {"eq": ["a"]}}, ["'eq'", "single"]),
        ({"created_at": {"gte": "yesterday"}}, ["ISO-8601"]),
        ({"OR": []}, ["OR"]),
        ({"and": [{"a": 1}]}, ["'AND'"]),
        ({"AND": "x"}, ["AND"]),
        ({"city": {}}, ["empty"]),
    ],
)
def test_parse_errors_name_the_operator(bad, words):
    with pytest.raises(InvalidInputError) as ei:
        parse_filters(bad)
    for w in words:
        assert w in str(ei.value)


# ------------------------------------------------------------------------------------------------ matching

MEM = {
    "id": "1",
    "memory": "I live in Paris",
    "memory_type": "fact",
    "category": "location",
    "user_id": "alice",
    "created_at": "2024-05-01T12:00:00+00:00",
    "updated_at": "2024-06-01T12:00:00+00:00",
    "metadata": {"city": "Paris", "n": 3, "score": 2.5, "tags": ["travel", "food"], "ok": True,
                 "nested": {"k": "v"}},
}


@pytest.mark.parametrize(
    "flt, expected",
    [
        ({"city": "Paris"}, True),
        ({"city": "Rome"}, False),
        ({"city": {"ne": "Rome"}}, True),
        ({"missing": {"ne": "x"}}, True),       # ne holds for a missing key (Qdrant must_not semantics)
        ({"missing": "x"}, False),
        ({"missing": None}, True),
        ({"city": None}, False),
        ({"n": 3}, True), ({"n": 3.0}, True), ({"n": "3"}, False),
        ({"n": {"gt": 2}}, True), ({"n": {"gt": 3}}, False), ({"n": {"gte": 3, "lte": 3}}, True),
        ({"score": {"lt": 2.5}}, False), ({"score": {"lte": 2.5}}, True),
        ({"city": {"in": ["Rome", "Paris"]}}, True), ({"city": {"nin": ["Rome", "Paris"]}}, False),
        ({"tags": "food"}, True), ({"tags": {"in": ["x", "travel"]}}, True), ({"tags": {"nin": ["food"]}}, False),
        ({"tags": {"contains": "foo"}}, True), ({"city": {"contains": "ari"}}, True),
        ({"city": {"contains": "ARI"}}, False),
        ({"ok": True}, True), ({"ok": 1}, False),
        ({"nested.k": "v"}, True),
        ({"memory_type": "fact", "category": "location"}, True),
        ({"user_id": "bob"}, False),
        ({"created_at": {"gte": "2024-05-01", "lt": "2024-05-02"}}, True),
        ({"updated_at": {"lt": "2024-05-02"}}, False),
        ({"AND": [{"city": "Paris"}, {"n": {"gt": 1}}]}, True),
        ({"AND": [{"city": "Paris"}, {"n": {"gt": 10}}]}, False),
        ({"OR": [{"city": "Rome"}, {"n": {"gt": 1}}]}, True),
        ({"OR": [{"city": "Rome"}, {"n": {"gt": 10}}]}, False),
        ({"NOT": [{"city": "Rome"}]}, True),
        ({"NOT": [{"city": "Rome"}, {"city": "Paris"}]}, False),
    ],
)
def test_matches(flt, expected):
    assert matches(parse_filters(flt), MEM) is expected


def test_matches_none_is_true():
    assert matches(None, MEM)


# -------------------------------------------------------------------------------------- embeddings factory

def test_make_embeddings_specs(monkeypatch):
    from memoryx.models.embeddings import LocalMiniLMEmbeddings, embedding_dims, make_embeddings
    from memoryx.settings import Settings

    local = make_embeddings(Settings())
    assert isinstance(local, LocalMiniLMEmbeddings)
    assert embedding_dims(local, Settings()) == 384  # known without loading the model

    with pytest.raises(InvalidInputError, match="MEMORYX_EMBEDDING_MODEL"):
        make_embeddings(Settings(embedding_model="cohere:embed-v3"))
    with pytest.raises(InvalidInputError, match="MEMORYX_EMBEDDING_MODEL"):
        make_embeddings(Settings(embedding_model="local:no-such-model"))

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InvalidInputError, match="MEMORYX_EMBEDDING_API_KEY"):
        make_embeddings(Settings(embedding_model="openai:text-embedding-3-small"))
    s = Settings(embedding_model="openai:text-embedding-3-small", embedding_base_url="http://127.0.0.1:9/v1",
                 embedding_api_key="k", embedding_dims=256, embedding_batch_size=16)
    emb = make_embeddings(s)
    assert type(emb).__name__ == "OpenAIEmbeddings"
    assert emb.model == "text-embedding-3-small" and emb.dimensions == 256 and emb.chunk_size == 16
    assert emb.openai_api_base == "http://127.0.0.1:9/v1" and emb.check_embedding_ctx_length is False
    assert embedding_dims(emb, s) == 256
    s2 = Settings(embedding_model="openai:text-embedding-3-large", embedding_api_key="k")
    assert embedding_dims(make_embeddings(s2), s2) == 3072


def test_words_a_query_is_widened_with_count_half():
    ids, weights = query_sparse_vector("my job", extra="job work occupation")
    w = dict(zip(ids, weights))
    assert w[token_id("job")] == 1.0  # the query's own word keeps its weight
    assert w[token_id("work")] == w[token_id("occupation")] == 0.5
    assert query_sparse_vector("my job") == ([token_id("job")], [1.0])
    # a CJK word the query is widened with counts as the word (its pairs), not as its single characters: "上" of
    # 上班 would match 晚上 ("evening") in a memory about something else; a one-character word stays itself
    ids, _ = query_sparse_vector("What's my job?", extra="上班 工作 働")
    assert token_id("上班") in ids and token_id("働") in ids
    assert token_id("上") not in ids and token_id("作") not in ids
