"""Case-insensitive patterns matched at about half the cost on ASCII text.

Python's `re` compares each character of an IGNORECASE pattern through case folding, and a search runs a handful of
such phrase patterns (memoryx.core.lexicon) over each of its ~80 candidates' texts, ~400 characters each on chat
turns. On an ASCII text, a pattern with no upper-case letter matches where its case-sensitive twin matches the
lowered text: in ASCII only A-Z and a-z are case pairs, and lowering keeps every character in its place. The
twin does that in about half the time.

`Caseless(pattern)` uses the twin when the parsed pattern proves it equivalent, and the pattern itself otherwise or
for a text that is not ASCII. Its matches have the pattern's spans; their groups are read from the lowered text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from re import _constants as sre
from re import _parser as sre_parse

# characters outside ASCII that IGNORECASE matches with an ASCII letter (İ, ı, ſ, the Kelvin sign)
_FOLDS_TO_ASCII = frozenset((0x130, 0x131, 0x17F, 0x212A))
_UPPER = range(ord("A"), ord("Z") + 1)


def _char_ok(code: int) -> bool:
    """A literal the twin matches as the pattern does: no upper-case ASCII letter, no cased letter beyond ASCII."""
    if code < 128:
        return code not in _UPPER
    ch = chr(code)
    return code not in _FOLDS_TO_ASCII and ch.lower() == ch.upper()


def _range_ok(lo: int, hi: int) -> bool:
    if lo <= _UPPER[-1] and hi >= _UPPER[0]:
        return False
    return hi < 128 or not any(lo <= c <= hi for c in _FOLDS_TO_ASCII)


def _tree_ok(items) -> bool:
    """Every part of the parsed pattern matches alike with and without IGNORECASE on lowered ASCII text."""
    for op, av in items:
        if op in (sre.LITERAL, sre.NOT_LITERAL):
            if not _char_ok(av):
                return False
        elif op is sre.IN:
            for kind, value in av:
                if kind is sre.LITERAL and not _char_ok(value):
                    return False
                if kind is sre.RANGE and not _range_ok(*value):
                    return False
                if kind not in (sre.LITERAL, sre.RANGE, sre.CATEGORY, sre.NEGATE):
                    return False
        elif op is sre.BRANCH:
            if not all(_tree_ok(branch) for branch in av[1]):
                return False
        elif op is sre.SUBPATTERN:
            _group, _add, delete, sub = av
            if delete & sre.SRE_FLAG_IGNORECASE or not _tree_ok(sub):
                return False  # a case-sensitive section
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            if not _tree_ok(av[2]):
                return False
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            if not _tree_ok(av[1]):
                return False
        elif op is sre.ATOMIC_GROUP:
            if not _tree_ok(av):
                return False
        elif op is sre.GROUPREF_EXISTS:
            _group, yes, no = av
            if not _tree_ok(yes) or (no is not None and not _tree_ok(no)):
                return False
        elif op not in (sre.AT, sre.ANY, sre.GROUPREF):
            return False
    return True


def twin_of(pattern: re.Pattern) -> re.Pattern | None:
    """The case-sensitive twin of an IGNORECASE pattern, or None when it is not one or may match otherwise."""
    if not isinstance(pattern.pattern, str) or not pattern.flags & re.IGNORECASE:
        return None
    if not _tree_ok(sre_parse.parse(pattern.pattern, pattern.flags)):
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


class Caseless:
    """`pattern`'s search and finditer, through its twin on ASCII text (see the module)."""

    __slots__ = ("pattern", "_twin")

    def __init__(self, pattern: re.Pattern):
        self.pattern = pattern
        self._twin = twin_of(pattern)

    def search(self, text: str) -> re.Match | None:
        if self._twin is not None and text.isascii():
            return self._twin.search(text.lower())
        return self.pattern.search(text)

    def finditer(self, text: str) -> Iterator[re.Match]:
        if self._twin is not None and text.isascii():
            return self._twin.finditer(text.lower())
        return self.pattern.finditer(text)
