"""Language knowledge as data: named tables of words and phrases, one JSON file per language, read by one matcher.

Rules that read text (the offline model's sentence shapes, the search path's question and statement signals) keep
their vocabulary here, and, where the knowledge is a language's own word order ("how long did I X before I Y", a
clause opening on は), its phrase patterns too; code keeps little besides what is no language's (a digit, a
capitalised word, punctuation). A word is added or removed by editing data, and a language is added by adding a
file.

Format
------
``core/lexicon_data/<lang>.json`` (``en``, ``zh``, ``ja``): one JSON object. Each key is a table name, namespaced by
the package that reads it (``"offline.greeting"``, ``"search.relation"``); each value is either

* a list of words or phrases: ``"offline.greeting": ["hi", "hello", "hey"]``;
* an object from a word or phrase to a string, for a form and what it stands for:
  ``"offline.typed_form": {"im": "I'm", "dont": "don't"}``;
* an object from a group's name to its words, for words sorted into kinds:
  ``"search.relation": {"dog": ["dog", "puppy"], "wife": ["wife", "spouse"]}`` (zh.json: ``{"dog": ["狗"], ...}``);
  or
* a phrase pattern: an object whose one key is ``"regex"``, holding a regular expression or a list of them (the
  alternatives of the pattern, or the patterns of a list tried in order), for the shapes of a language that no
  word list says ("how many days between X and Y"): ``"search.pair": {"regex": ["\\bbetween (.+?) and (.+)"]}``.
  It names its word classes as tables, ``<@search.weekday:en>`` (see `compile`), so a word is still added to a
  list, not to the pattern.

A key starting with ``_`` is a comment, not a table. A table may be in some language files and not others: asked
for without a language, a table is the union of every file that has it (in the order en, zh, ja); asked for in one
language, it must be in that file. A name no file has is an error (`LexiconError`, naming the files and the
tables they do have), never an empty table, so a typo cannot silently turn a rule off.

Matching
--------
An entry is literal text, never a pattern. In Latin script it matches as a whole word or phrase, ignoring case,
with any run of white space for a space and either apostrophe (' or ’) for one; in Chinese or Japanese (an
entry holding a Han, kana or Hangul character) it matches anywhere, as those scripts put no space between words.
Longer entries are tried first ("刚刚" before "刚", "hi there" before "hi"). A phrase pattern is a regular
expression: it places its own boundaries.

API
---
* ``table(name, lang=None) -> tuple[str, ...]`` the entries (of every group, for a grouped table);
  ``mapping(name, lang=None) -> dict[str, str]`` a table of forms; ``groups(name, lang=None) -> dict[str,
  tuple[str, ...]]`` a grouped table, each group's words of every language asked for (en, then zh, then ja);
  ``words(name, lang=None) -> frozenset[str]`` the entries lower-cased, for membership tests.
* ``matcher(name, lang=None) -> Matcher``: ``.search(text)`` (first match or None), ``.findall(text)``,
  ``.contains(text)``, ``.fullmatch(text)`` (the whole text, stripped, is one entry); ``Matcher(entries)`` for any
  words (a group of a grouped table).
* ``alternation(name, lang=None) -> str``: the regular expression ``(?:entry|entry)`` for a grammar pattern; no word
  boundaries (the grammar around it places them).
* ``compile(pattern, flags=0) -> re.Pattern``: a grammar pattern with ``<@name>`` (every language) or
  ``<@name:lang>`` placeholders, each replaced by the table's alternation (a phrase pattern's: its alternatives).
* ``pattern(name, lang=None, flags=0) -> re.Pattern``: a phrase pattern table compiled as one pattern, the
  alternatives of every language asked for (en, then zh, then ja) joined; ``patterns(name, lang=None, flags=0)``
  each alternative compiled alone, in that order, for patterns tried one after another (each with its groups).

Everything is read once and cached: a file on its first use, a matcher or compiled pattern on its first request
(``clear_cache()`` forgets them, for a tool that edits the files while it runs).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["LANGUAGES", "LexiconError", "Matcher", "alternation", "clear_cache", "compile", "groups", "mapping",
           "matcher", "pattern", "patterns", "table", "words"]

LANGUAGES = ("en", "zh", "ja")
DATA = Path(__file__).with_name("lexicon_data")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LATIN = r"[0-9A-Za-z_\u00c0-\u024f]"  # a letter of a Latin-script word ("Google" in 我在Google工作 is a word)
_PLACEHOLDER = re.compile(r"<@([a-z][\w.]*)(?::([a-z]{2}))?>")


class LexiconError(LookupError):
    """A table that is not in the data files, or a data file that is not a lexicon."""


@lru_cache(maxsize=None)
def _file(lang: str) -> dict[str, list[str] | dict[str, str] | dict[str, list[str]]]:
    if lang not in LANGUAGES:
        raise LexiconError(f"no lexicon for language {lang!r}: the languages are {', '.join(LANGUAGES)}")
    path = DATA / f"{lang}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LexiconError(f"the lexicon file {path} is missing: reinstall memoryx (it ships with the package)") \
            from None
    if not isinstance(data, dict):
        raise LexiconError(f"{path} must hold one JSON object of named tables")
    tables = {}
    for name, value in data.items():
        if name.startswith("_"):
            continue
        if _is_pattern(value):
            if not (_entries(value["regex"]) or isinstance(value["regex"], str) and value["regex"].strip()):
                raise LexiconError(f"{path}: phrase pattern {name!r} must hold a regular expression or a list of them")
        elif not (_entries(value) or isinstance(value, dict) and (all(isinstance(v, str) for v in value.values()) or
                                                             all(_entries(v) for v in value.values()))):
            raise LexiconError(f"{path}: table {name!r} must be a list of non-empty strings, an object of strings, "
                               "an object of lists of non-empty strings or {\"regex\": a pattern or a list of them}")
        tables[name] = value
    return tables


def _entries(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def _is_pattern(value) -> bool:
    return isinstance(value, dict) and list(value) == ["regex"]


def _raw(name: str, lang: str | None) -> list[tuple[str, list[str] | dict[str, str]]]:
    """(language, value) of each file holding the table."""
    langs = LANGUAGES if lang is None else (lang,)
    found = [(code, _file(code)[name]) for code in langs if name in _file(code)]
    if not found:
        where = f"{lang}.json" if lang else ", ".join(f"{code}.json" for code in LANGUAGES)
        known = sorted({t for code in langs for t in _file(code)})
        raise LexiconError(f"no lexicon table {name!r} in {where} (under {DATA}); the tables there are: "
                           f"{', '.join(known)}")
    return found


@lru_cache(maxsize=None)
def table(name: str, lang: str | None = None) -> tuple[str, ...]:
    """The entries of a table (the forms of a table of forms, the words of every group), in file order, once each."""
    out: dict[str, None] = {}
    for code, value in _raw(name, lang):
        if _is_pattern(value):
            raise LexiconError(f"lexicon table {name!r} in {code}.json is a phrase pattern, not words: read it with "
                               "lexicon.pattern or lexicon.patterns")
        if isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
            for group in value.values():
                out.update(dict.fromkeys(group))
        else:
            out.update(dict.fromkeys(value))
    return tuple(out)


@lru_cache(maxsize=None)
def mapping(name: str, lang: str | None = None) -> dict[str, str]:
    """An object table: each form and what it stands for."""
    out: dict[str, str] = {}
    for code, value in _raw(name, lang):
        if not isinstance(value, dict) or _is_pattern(value) or not all(isinstance(v, str) for v in value.values()):
            raise LexiconError(f"lexicon table {name!r} in {code}.json is not an object of forms (a form -> a string)")
        out.update(value)
    return out


@lru_cache(maxsize=None)
def groups(name: str, lang: str | None = None) -> dict[str, tuple[str, ...]]:
    """A grouped table: each group's words, those of every language asked for together (en, then zh, then ja)."""
    out: dict[str, dict[str, None]] = {}
    for code, value in _raw(name, lang):
        if not isinstance(value, dict) or _is_pattern(value) or not all(isinstance(v, list) for v in value.values()):
            raise LexiconError(f"lexicon table {name!r} in {code}.json is not an object of groups (a name -> words)")
        for group, entries in value.items():
            out.setdefault(group, {}).update(dict.fromkeys(entries))
    return {group: tuple(entries) for group, entries in out.items()}


@lru_cache(maxsize=None)
def words(name: str, lang: str | None = None) -> frozenset[str]:
    """The entries lower-cased, for `word.lower() in words(...)`."""
    return frozenset(entry.lower() for entry in table(name, lang))


def _entry_pattern(entry: str) -> str:
    """An entry as a regular expression: literal, with any white space for a space and either apostrophe."""
    parts = re.split(r"(\s+|['’])", entry.strip())
    return "".join(r"\s+" if p.isspace() else "['’]" if p in ("'", "’") else re.escape(p) for p in parts if p)


def _ordered(entries: tuple[str, ...]) -> list[str]:
    return sorted(entries, key=lambda e: -len(e))  # (a stable sort: equal lengths keep the file order)


@lru_cache(maxsize=None)
def _alternatives(name: str, lang: str | None = None) -> tuple[str, ...]:
    """The regular expressions of a phrase pattern table, of every language asked for (en, then zh, then ja)."""
    out: list[str] = []
    for code, value in _raw(name, lang):
        if not _is_pattern(value):
            raise LexiconError(f"lexicon table {name!r} in {code}.json is words, not a phrase pattern "
                               '({"regex": ...}): read it with lexicon.matcher or <@' + name + "> in a pattern")
        regex = value["regex"]
        out.extend([regex] if isinstance(regex, str) else regex)
    return tuple(out)


def _is_pattern_table(name: str, lang: str | None) -> bool:
    return any(_is_pattern(value) for _, value in _raw(name, lang))


@lru_cache(maxsize=None)
def alternation(name: str, lang: str | None = None) -> str:
    """``(?:a|b|...)`` of a table's entries, longest first, for a grammar pattern that places its own boundaries;
    of a phrase pattern table, its alternatives (their own placeholders replaced)."""
    if _is_pattern_table(name, lang):
        return "(?:" + _expand("|".join(_alternatives(name, lang))) + ")"
    return "(?:" + "|".join(_entry_pattern(e) for e in _ordered(table(name, lang))) + ")"


def _expand(pattern: str) -> str:
    return _PLACEHOLDER.sub(lambda m: alternation(m.group(1), m.group(2)), pattern)


class Matcher:
    """The entries of one table found in a text: whole words in Latin script (ignoring case), anywhere in CJK."""

    def __init__(self, entries: tuple[str, ...]):
        runs: list[tuple[tuple[str, str], list[str]]] = []
        for entry in _ordered(entries):
            if _CJK.search(entry):
                edges = ("", "")
            else:  # a word boundary where the entry starts or ends with a letter (a Chinese character beside it is one)
                edges = (rf"(?<!{_LATIN})" if re.match(r"\w", entry.strip()) else "",
                         rf"(?!{_LATIN})" if re.search(r"\w$", entry.strip()) else "")
            if runs and runs[-1][0] == edges:
                runs[-1][1].append(_entry_pattern(entry))
            else:
                runs.append((edges, [_entry_pattern(entry)]))
        # neighbouring entries with the same boundaries share them: the same matches in the same order of preference
        # (longest first), and one look-behind per run instead of one per entry keeps a search fast
        self.entries = entries
        self.pattern = re.compile("|".join(f"{start}(?:{'|'.join(bodies)}){end}" for (start, end), bodies in runs)
                                  or r"(?!)", re.IGNORECASE)

    def search(self, text: str) -> str | None:
        """The first entry found in the text, as written there, or None."""
        m = self.pattern.search(text or "")
        return m.group(0) if m else None

    def findall(self, text: str) -> list[str]:
        return self.pattern.findall(text or "")

    def contains(self, text: str) -> bool:
        return self.pattern.search(text or "") is not None

    def fullmatch(self, text: str) -> bool:
        return self.pattern.fullmatch((text or "").strip()) is not None


@lru_cache(maxsize=None)
def matcher(name: str, lang: str | None = None) -> Matcher:
    """The matcher of a table (of every language when `lang` is None), built once."""
    return Matcher(table(name, lang))


@lru_cache(maxsize=None)
def compile(pattern: str, flags: int = 0) -> re.Pattern:  # noqa: A001 - read as lexicon.compile, like re.compile
    """A grammar pattern with its word classes from the tables: ``<@offline.greeting>`` (every language) or
    ``<@offline.greeting:en>`` becomes that table's `alternation`."""
    return re.compile(_expand(pattern), flags)


@lru_cache(maxsize=None)
def pattern(name: str, lang: str | None = None, flags: int = 0) -> re.Pattern:
    """A phrase pattern table as one compiled pattern: its alternatives in every language asked for, joined."""
    return _compiled(name, "|".join(_alternatives(name, lang)), flags)


@lru_cache(maxsize=None)
def patterns(name: str, lang: str | None = None, flags: int = 0) -> tuple[re.Pattern, ...]:
    """A phrase pattern table's alternatives compiled one by one, in file order (en, then zh, then ja): for
    patterns tried in turn, each with its own groups."""
    return tuple(_compiled(name, regex, flags) for regex in _alternatives(name, lang))


def _compiled(name: str, regex: str, flags: int) -> re.Pattern:
    try:
        return compile(regex, flags)
    except re.error as exc:
        raise LexiconError(f"the phrase pattern {name!r} does not compile ({exc}): {regex}") from None


def clear_cache() -> None:
    """Forget every file, table, matcher and pattern read so far: the next request reads the files again."""
    for cached in (_file, table, mapping, groups, words, _alternatives, alternation, matcher, compile, pattern,
                   patterns):
        cached.cache_clear()
