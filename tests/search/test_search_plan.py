"""Search as data, without engines: recipes, the typed knobs, rerankers, dates, the planner node (query
rewriting included) and settings as the single source of truth (unknown MEMORYX_ variables warned about)."""

from __future__ import annotations

import logging
import re
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.nodes.analyze_query import analyze_query
from memoryx.nodes.rerank import rerank
from memoryx.prompts.search import RERANK_PROMPT
from memoryx.runtime.context import Context
from memoryx.search.dates import asks_when, states_time, time_window
from memoryx.search.plan import SearchPlan
from memoryx.search.recipes import AUTO, DEEP, FAST, HYBRID, KEYWORD_ONLY, RECIPES, VECTOR_ONLY, recipe_named
from memoryx.search.rerankers import CrossEncoderReranker, ModelReranker, NoReranker, make_reranker
from memoryx.search.tuning import DEFAULTS, SearchTuning, tuning
from memoryx.settings import Settings, get_settings, unknown_env_names
from memoryx.stores.sql import SQLStore

UTC = timezone.utc


class ScriptedModel:
    """A chat model answering from a list, recording every conversation it was sent."""

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.calls: list[list] = []

    def invoke(self, messages, config=None):
        self.calls.append(list(messages))
        if not self.answers:
            raise AssertionError("the model was called more often than scripted")
        return AIMessage(content=self.answers.pop(0))


def runtime_with(settings: Settings, *, extraction_llm=None, graph=None, sql=None, **ctx) -> Runtime:
    # a real (in-memory) system of record: analyze_query reads the user's profile names, latest event time and
    # the scope's entities the query names
    services = SimpleNamespace(settings=settings, extraction_llm=extraction_llm, graph=graph,
                               sql=sql or SQLStore("sqlite://"))
    return Runtime(context=Context(services=services, **ctx))


# ---------------------------------------------------------------------------------------------- recipes


def test_recipes_choose_paths_and_depth():
    assert set(RECIPES) == {"fast", "deep", "auto", "hybrid", "vector", "keyword"}
    assert recipe_named("DEEP") is DEEP
    with pytest.raises(InvalidInputError, match="mode"):
        recipe_named("turbo")
    plain, why = "Tell me about Ana", "Why did Ana move to Paris?"
    assert FAST.depth_for(plain, requested=2, configured=1) == 0  # fast never walks the graph
    assert DEEP.depth_for(plain, requested=None, configured=1) == 2
    assert DEEP.depth_for(plain, requested=1, configured=1) == 1
    assert AUTO.depth_for(plain, requested=None, configured=1) == 1
    assert AUTO.depth_for(why, requested=None, configured=1) == 2  # causal questions go two hops
    assert AUTO.depth_for(why, requested=None, configured=0) == 0
    assert AUTO.depth_for(why, requested=1, configured=1) == 1  # an explicit depth wins
    assert not FAST.uses("graph") and FAST.uses("time")
    assert set(HYBRID.paths) == {"dense", "keyword"}
    assert set(VECTOR_ONLY.paths) == {"dense"} and set(KEYWORD_ONLY.paths) == {"keyword"}
    for recipe in (HYBRID, VECTOR_ONLY, KEYWORD_ONLY):
        assert recipe.depth_for(why, requested=2, configured=2) == 0


def test_settings_accept_every_recipe_name():
    for name in RECIPES:
        assert Settings(search_mode=name).search_mode == name


# ------------------------------------------------------------------------------------------------ knobs


def test_tuning_is_typed():
    assert set(SearchTuning.model_fields) == set(DEFAULTS)
    t = tuning(Settings(search_tuning={"context_window": 3, "weight_keyword": "0.6"}))
    assert t.context_window == 3 and t.weight_keyword == 0.6 and t["context_window"] == 3
    with pytest.raises(InvalidInputError, match="context_window"):
        tuning(Settings(search_tuning={"context_window": "many"}))


def test_plan_candidate_k():
    plan = SearchPlan(scope=Scope(user_id="u"), limit=40)
    assert plan.empty and plan.candidate_k == 80
    assert SearchPlan(scope=Scope(user_id="u"), limit=5).candidate_k == DEFAULTS["candidate_k"]


# ------------------------------------------------------------------------------------------------ dates


def test_dates_out_of_the_node():
    may = time_window("2023年5月我做了什么")
    assert may[0] <= datetime(2023, 5, 20, tzinfo=UTC).timestamp() < may[1]
    now = datetime(2024, 3, 10, 15, tzinfo=UTC)
    lo, hi = time_window("what did I do yesterday?", now=now)
    assert lo == datetime(2024, 3, 9, tzinfo=UTC).timestamp() and hi == datetime(2024, 3, 10, tzinfo=UTC).timestamp()
    lo, hi = time_window("before 9 May 2023")
    assert hi == datetime(2023, 5, 10, tzinfo=UTC).timestamp()
    assert asks_when("When did Ana move?") and asks_when("你什么时候去的东京") and asks_when("いつ行きましたか")
    assert not asks_when("Where does Ana live?")
    # a time asked for in other words: which month / week, how many weeks
    for q in ("Which month was John in Italy?", "In which month's game did he score 40?",
              "After how many weeks did Tim reconnect with her?", "What year did I graduate?"):
        assert asks_when(q), q
    assert not asks_when("Which city did I visit?") and not asks_when("How many plants do I have?")
    assert states_time("昨天我去了公园") and states_time("We met last week") and not states_time("I like tea")


# -------------------------------------------------------------------------------------------- rerankers


def test_reranker_kinds():
    settings = Settings()
    assert isinstance(make_reranker(None, settings), NoReranker)
    assert isinstance(make_reranker(" none ", settings), NoReranker)
    assert make_reranker(None, settings).scores("q", ["a"]) is None
    ce = make_reranker("cross-encoder:/models/ms-marco", settings)
    assert isinstance(ce, CrossEncoderReranker) and ce.path == "/models/ms-marco"
    assert isinstance(make_reranker("openai:gpt-4o-mini", settings), ModelReranker)


def test_cross_encoder_scores_are_squashed_in_order():
    class Model:
        def predict(self, pairs):
            assert pairs == [("q", "a"), ("q", "b")]
            return [-2.0, 3.0]

    scores = CrossEncoderReranker("x", model=Model()).scores("q", ["a", "b"])
    assert 0.0 < scores[0] < 0.5 < scores[1] < 1.0


def test_model_reranker_reads_scores_and_retries_with_the_error():
    llm = ScriptedModel('{"scores": [7]}', 'Sure: {"scores": [2, 15]}')
    scores = ModelReranker("scripted", Settings(), llm=llm).scores("Where does Ana live?", ["Ana cooks", "Ana lives in Rome"])
    assert scores == [0.2, 1.0]
    assert len(llm.calls) == 2 and "1 scores for 2 memories" in llm.calls[1][-1].content
    assert "Ana lives in Rome" in llm.calls[0][1].content


def test_rerank_prompt_sentences_end():
    assert "10 Answer" not in RERANK_PROMPT and re.search(r"10 \([^)]*\)\. Answer", RERANK_PROMPT)


def _ranked(*pairs):
    return [{"id": i, "relevance": rel, "sources": ["dense"], "memory": {"id": i, "memory": f"memory {i}"}}
            for i, rel in pairs]


def test_rerank_node_reorders_and_survives_a_failing_reranker(monkeypatch):
    import memoryx.nodes.rerank as node

    plan = SearchPlan(scope=Scope(user_id="u"), query="q", reranker="cross-encoder:x")
    state = {"plan": plan, "ranked": _ranked(("a", 1.0), ("b", 0.8))}
    runtime = runtime_with(Settings())
    monkeypatch.setattr(node, "make_reranker", lambda spec, settings: CrossEncoderReranker(
        spec, model=SimpleNamespace(predict=lambda pairs: [-5.0, 5.0])))
    out = rerank(state, runtime)
    assert [c["id"] for c in out["ranked"]] == ["b", "a"] and "rerank" in out["ranked"][0]["sources"]

    def broken(pairs):
        raise RuntimeError("model file missing")

    monkeypatch.setattr(node, "make_reranker", lambda spec, settings: CrossEncoderReranker(
        spec, model=SimpleNamespace(predict=broken)))
    assert "ranked" not in rerank(state, runtime)  # the fused ranking stands


# ------------------------------------------------------------------------------------------ the planner


def test_analyze_query_writes_a_typed_plan():
    settings = Settings(search_tuning={"candidate_k": 12}, fusion="rrf")
    out = analyze_query({"query": "  What did  Melanie do in July 2023? ", "user_id": "u", "limit": 3,
                         "filters": {"city": "Paris"}, "mode": "deep"}, runtime_with(settings))
    plan = out["plan"]
    assert isinstance(plan, SearchPlan) and plan.scope == Scope(user_id="u")
    assert plan.query == "What did Melanie do in July 2023?" and plan.limit == 3 and plan.filters is not None
    assert plan.recipe is DEEP and plan.expand_depth == 2 and not plan.use_graph  # no graph store here
    assert plan.time_window is not None and not plan.asks_when
    assert plan.fusion == "rrf" and plan.tuning.candidate_k == 12 and plan.reranker is None
    empty = analyze_query({"query": " ", "user_id": "u", "mode": "turbo"}, runtime_with(settings))["plan"]
    assert empty.empty and empty.scope == Scope(user_id="u")


def test_search_rewrite_setting_is_honoured():
    answer = '{"query": "Ana hometown", "entities": ["Ana", 7], "keywords": ["birthplace"]}'
    llm = ScriptedModel(answer)
    sql = SQLStore("sqlite://")
    ana = sql.upsert_entity(scope=Scope(user_id="u"), name="Ana", entity_type="person")
    sql.upsert_entity(scope=Scope(user_id="someone-else"), name="Ana", entity_type="person")
    plan = analyze_query({"query": "where is she from?", "user_id": "u"},
                         runtime_with(Settings(search_rewrite=True), extraction_llm=llm, sql=sql))["plan"]
    assert len(llm.calls) == 1 and plan.rewritten
    assert plan.semantic_query == "Ana hometown" and "birthplace" in plan.keyword_query
    # the rewrite's entity names are looked up in the scope's graph (only u's Ana)
    assert [e["id"] for e in plan.entities] == [ana["id"]]
    # off: the model is never asked (ScriptedModel with no answers would fail)
    plan = analyze_query({"query": "where is she from?", "user_id": "u"},
                         runtime_with(Settings(), extraction_llm=ScriptedModel()))["plan"]
    assert not plan.rewritten and plan.semantic_query == "where is she from?"


def test_failed_rewrite_searches_the_plain_query(caplog):
    llm = ScriptedModel("no idea", "still no JSON")
    with caplog.at_level(logging.WARNING):
        plan = analyze_query({"query": "where is she from?", "user_id": "u", "rewrite": True},
                             runtime_with(Settings(), extraction_llm=llm))["plan"]
    assert not plan.rewritten and plan.semantic_query == "where is she from?" and len(llm.calls) == 2
    assert "query rewriting failed" in caplog.text


# -------------------------------------------------------------------------------- settings are the truth


def test_unknown_memoryx_variable_is_warned_once(monkeypatch, caplog):
    monkeypatch.setenv("MEMORYX_SEARCH_MOD", "fast")
    monkeypatch.setenv("MEMORYX_TEST_SOMETHING", "1")  # the test suite's own switches are not settings
    found = unknown_env_names()
    assert found["MEMORYX_SEARCH_MOD"] == "MEMORYX_SEARCH_MODE"
    assert not {"MEMORYX_TEST_SOMETHING", "MEMORYX_ENV_FILE", "MEMORYX_DATA_DIR"} & set(found)
    assert unknown_env_names({"MEMORYX_ZZZZZZZZ": "1"}) == {"MEMORYX_ZZZZZZZZ": None}
    get_settings.cache_clear()
    with caplog.at_level(logging.WARNING, logger="memoryx.settings"):
        get_settings()
        get_settings.cache_clear()
        get_settings()
    warnings = [r.getMessage() for r in caplog.records if "MEMORYX_SEARCH_MOD " in r.getMessage()]
    assert len(warnings) == 1 and "MEMORYX_SEARCH_MODE" in warnings[0]


def test_code_reads_settings_as_fields():
    """Every `settings.<name>` the package reads is a Settings field or method, and no setting is read
    through getattr with a default that would hide a missing field."""
    root = Path(__file__).resolve().parents[2]
    names = set(Settings.model_fields) | {n for n in dir(Settings) if not n.startswith("_")}
    missing, hidden = set(), []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).parts
        if {"tests", "memoryx.egg-info"} & set(parts) or any(p.startswith(".") for p in parts):  # .git, .venv
            continue
        text = path.read_text(encoding="utf-8")
        missing |= {m for m in re.findall(r"\bsettings\.([a-z_]\w*)", text) if m not in names}
        hidden += [f"{path.relative_to(root)}: {m}" for m in re.findall(r"getattr\([\w.]*settings\s*,[^)]*\)", text)]
    assert not missing, f"settings read that are not Settings fields: {sorted(missing)}"
    assert not hidden, f"settings read with getattr: {hidden}"


def test_a_chinese_or_japanese_question_is_planned_for_what_it_asks():
    """Its question words leave the keyword query (they would match "什么口味" or "どこか" in any memory), and with
    the English MiniLM its dense path weighs
    `weight_dense_unread` (the encoder's vectors of Chinese are close to noise); an English question keeps both."""
    settings = Settings()
    plan = analyze_query({"query": "健太って今どの部署で働いてるんだっけ？", "user_id": "u"}, runtime_with(settings))["plan"]
    assert "健太" in plan.keyword_query and not plan.encoder_reads_query
    assert not any(w in plan.keyword_query for w in ("どの", "だっけ", "って"))
    plan = analyze_query({"query": "我现在一般是什么时候去打球？", "user_id": "u"}, runtime_with(settings))["plan"]
    assert "什么" not in plan.keyword_query and "打球" in plan.keyword_query and not plan.encoder_reads_query
    plan = analyze_query({"query": "What's my role at the Osaka company?", "user_id": "u"}, runtime_with(settings))["plan"]
    assert plan.encoder_reads_query
    e5 = Settings(embedding_model="local:multilingual-e5-small")
    assert analyze_query({"query": "我闺女在哪所学校念书？", "user_id": "u"}, runtime_with(e5))["plan"].encoder_reads_query
