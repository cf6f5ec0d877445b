"""The lexicon: named tables of words, one JSON file per language, read by one matcher (whole words in Latin
script, substrings in Chinese and Japanese), each read and compiled once; a table no file has is an error."""

from __future__ import annotations

import json
import re

import pytest

from memoryx.core import lexicon
from memoryx.core.lexicon import LexiconError


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A lexicon of its own in tmp_path (the shipped files stay untouched)."""
    files = {
        "en": {"_about": "a comment, not a table", "test.pet": ["cat", "dog", "guinea pig", "can't stand"],
               "test.form": {"im": "I'm", "dont": "don't"}, "test.only_en": ["x"],
               "test.kin": {"wife": ["wife", "spouse"], "husband": ["husband", "spouse"]}},
        "zh": {"test.pet": ["猫", "狗", "刚", "刚刚"], "test.kin": {"wife": ["老婆", "妻子"], "son": ["儿子"]}},
        "ja": {"test.pet": ["猫", "いぬ"]},
    }
    for lang, tables in files.items():
        (tmp_path / f"{lang}.json").write_text(json.dumps(tables, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(lexicon, "DATA", tmp_path)
    lexicon.clear_cache()
    yield tmp_path
    lexicon.clear_cache()


def test_tables_are_read_per_language_and_as_the_union_of_every_language(data):
    assert lexicon.table("test.pet", "en") == ("cat", "dog", "guinea pig", "can't stand")
    assert lexicon.table("test.pet", "ja") == ("猫", "いぬ")
    assert lexicon.table("test.pet") == ("cat", "dog", "guinea pig", "can't stand", "猫", "狗", "刚", "刚刚", "いぬ")
    assert lexicon.words("test.pet", "en") >= {"cat", "guinea pig"} and "Cat" not in lexicon.words("test.pet", "en")
    assert lexicon.mapping("test.form", "en") == {"im": "I'm", "dont": "don't"}
    assert lexicon.table("test.form") == ("im", "dont")  # a table of forms: its entries are the forms


def test_a_grouped_table_gives_each_group_its_words_in_every_language(data):
    assert lexicon.groups("test.kin") == {"wife": ("wife", "spouse", "老婆", "妻子"), "husband": ("husband", "spouse"),
                                          "son": ("儿子",)}
    assert lexicon.groups("test.kin", "zh") == {"wife": ("老婆", "妻子"), "son": ("儿子",)}
    assert lexicon.table("test.kin") == ("wife", "spouse", "husband", "老婆", "妻子", "儿子")
    assert lexicon.matcher("test.kin").findall("my spouse, 我老婆") == ["spouse", "老婆"]
    assert lexicon.Matcher(lexicon.groups("test.kin")["wife"]).contains("我妻子")
    with pytest.raises(LexiconError, match="not an object of groups"):
        lexicon.groups("test.form", "en")
    with pytest.raises(LexiconError, match="not an object of forms"):
        lexicon.mapping("test.kin", "en")


def test_latin_entries_match_whole_words_ignoring_case_and_spacing(data):
    pets = lexicon.matcher("test.pet", "en")
    assert pets.contains("My DOG barks") and pets.search("My DOG barks") == "DOG"
    assert not pets.contains("dogma and catalogue")  # not inside another word
    assert pets.findall("a guinea  pig and a cat") == ["guinea  pig", "cat"]
    assert pets.contains("I can’t stand it")  # either apostrophe
    assert pets.fullmatch("  Guinea pig ") and not pets.fullmatch("guinea pigs")


def test_chinese_and_japanese_entries_match_inside_a_sentence(data):
    zh = lexicon.matcher("test.pet", "zh")
    assert zh.contains("我家的狗很乖") and zh.findall("猫和狗") == ["猫", "狗"]
    assert zh.search("我刚刚到") == "刚刚"  # the longer entry first
    ja = lexicon.matcher("test.pet")  # every language: each entry by its own script
    assert ja.findall("うちのいぬとcat") == ["いぬ", "cat"]
    assert not lexicon.matcher("test.pet", "ja").contains("狗")
    assert lexicon.matcher("test.pet", "en").findall("我的dog叫豆豆，没有dogs") == ["dog"]  # a Latin word beside Chinese


def test_alternation_and_compile_put_a_table_inside_a_grammar_pattern(data):
    assert lexicon.alternation("test.pet", "zh") == "(?:刚刚|猫|狗|刚)"
    pattern = lexicon.compile(r"^my (?P<pet><@test.pet:en>) is (\w+)$", re.I)
    assert pattern.match("My guinea pig is Ginger").group("pet") == "guinea pig"
    assert not pattern.match("My hamster is Ginger")
    assert lexicon.compile(r"^<@test.pet>$").match("いぬ")


def test_a_phrase_pattern_is_data_of_each_language_naming_its_word_classes_as_tables(tmp_path, monkeypatch):
    files = {
        "en": {"test.pet": ["cat", "guinea pig"],
               "test.pair": {"regex": [r"\bbetween (.+?) and (.+)", r"\bmy (<@test.pet:en>) is (\w+)"]}},
        "zh": {"test.pet": ["猫"], "test.pair": {"regex": "^(.+?)和(.+?)之间"}},
        "ja": {"test.pair": {"regex": "^(.+?)と(.+?)の間"}},
    }
    for lang, tables in files.items():
        (tmp_path / f"{lang}.json").write_text(json.dumps(tables, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(lexicon, "DATA", tmp_path)
    lexicon.clear_cache()
    try:
        between, pet, zh, ja = lexicon.patterns("test.pair", flags=re.I)  # each alone, en then zh then ja
        assert between.search("Days Between the walk and the swim").groups() == ("the walk", "the swim")
        assert pet.search("my guinea pig is Ginger").groups() == ("guinea pig", "Ginger")
        assert zh.match("散步和游泳之间").groups() == ("散步", "游泳") and ja.match("散歩と水泳の間").group(2) == "水泳"
        assert lexicon.pattern("test.pair").search("ウォークとビーチの間")  # one pattern: every language's joined
        assert lexicon.pattern("test.pair", "en").search("散步和游泳之间") is None
        assert lexicon.compile(r"^<@test.pair:zh>$").match("猫和狗之间")  # a pattern table inside a grammar
        with pytest.raises(LexiconError, match="phrase pattern, not words"):
            lexicon.matcher("test.pair")
        with pytest.raises(LexiconError, match="words, not a phrase pattern"):
            lexicon.pattern("test.pet")
        (tmp_path / "ja.json").write_text(json.dumps({"test.pair": {"regex": "(unclosed"}}), encoding="utf-8")
        lexicon.clear_cache()
        with pytest.raises(LexiconError, match=r"'test\.pair' does not compile"):
            lexicon.patterns("test.pair", "ja")
    finally:
        lexicon.clear_cache()


def test_each_table_is_read_and_compiled_once(data):
    assert lexicon.matcher("test.pet", "en") is lexicon.matcher("test.pet", "en")
    assert lexicon.compile(r"<@test.pet>") is lexicon.compile(r"<@test.pet>")
    (data / "en.json").write_text(json.dumps({"test.pet": ["ferret"]}), encoding="utf-8")
    assert lexicon.table("test.pet", "en")[0] == "cat"  # the file was read once
    lexicon.clear_cache()
    assert lexicon.table("test.pet", "en") == ("ferret",)


def test_a_missing_table_is_a_clear_error_never_an_empty_table(data):
    with pytest.raises(LexiconError, match=r"no lexicon table 'test\.pets' in en\.json, zh\.json, ja\.json.*test\.pet"):
        lexicon.table("test.pets")
    with pytest.raises(LexiconError, match=r"'test\.only_en' in zh\.json"):
        lexicon.matcher("test.only_en", "zh")
    with pytest.raises(LexiconError, match=r"<@test\.nope>|test\.nope"):
        lexicon.compile(r"^<@test.nope>$")
    with pytest.raises(LexiconError, match="not an object of forms"):
        lexicon.mapping("test.pet", "en")
    with pytest.raises(LexiconError, match="languages are en, zh, ja"):
        lexicon.table("test.pet", "ko")


def test_a_malformed_file_names_the_file_and_the_table(data):
    (data / "ja.json").write_text(json.dumps({"test.pet": ["猫", 3]}), encoding="utf-8")
    with pytest.raises(LexiconError, match=r"ja\.json: table 'test\.pet' must be a list of non-empty strings"):
        lexicon.table("test.pet", "ja")
    lexicon.clear_cache()
    (data / "ja.json").write_text(json.dumps({"test.pet": {"cat": ["猫"], "dog": "犬"}}), encoding="utf-8")
    with pytest.raises(LexiconError, match=r"ja\.json: table 'test\.pet'"):
        lexicon.table("test.pet", "ja")


def test_the_shipped_files_hold_only_well_formed_namespaced_tables():
    lexicon.clear_cache()
    for lang in lexicon.LANGUAGES:
        raw = json.loads((lexicon.DATA / f"{lang}.json").read_text(encoding="utf-8"))
        names = [k for k in raw if not k.startswith("_")]
        assert names and all(re.fullmatch(r"[a-z]+\.[a-z_.]+", n) for n in names), names
        for name in names:
            value = raw[name]
            if isinstance(value, dict) and list(value) == ["regex"]:
                assert lexicon.patterns(name, lang)  # every phrase pattern compiles, its tables found
                continue
            grouped = isinstance(value, dict) and all(isinstance(v, list) for v in value.values())
            for entries in (value.values() if grouped else [list(value)]):
                assert len(entries) == len(set(entries)), f"{lang}.json {name} repeats an entry"
            lexicon.matcher(name, lang)  # every table compiles


def test_the_search_paths_language_knowledge_is_data_not_regular_expressions():
    """What search/ reads of English, Chinese and Japanese is the lexicon's search.* tables; the code keeps a few
    patterns that are no language's (digits, a capitalised word, punctuation). Counted as the issue counts them:
    re.compile( and re.search / match / ... with a literal pattern."""
    from pathlib import Path

    search = Path(lexicon.__file__).parents[1] / "search"
    counted = re.compile(r"re\.compile\(|re\.(?:search|match|fullmatch|findall|finditer|sub|split)\(r?[\"']")
    per_file = {p.name: len(counted.findall(p.read_text(encoding="utf-8"))) for p in search.glob("*.py")}
    assert sum(per_file.values()) <= 30, {name: n for name, n in per_file.items() if n}
