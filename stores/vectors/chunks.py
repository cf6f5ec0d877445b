"""Windows of a long memory text, each indexed as one more dense vector of the same memory.

The encoder reads a text's first tokens only (MiniLM truncates at 256 word pieces, about 1,000 English
characters), so a detail deep inside a long chat turn never reaches the memory's vector. A long text gets,
beside its own vector, the vectors of windows that cover the rest of it; a window found maps back to its
memory (the point keeps the memory's id and payload), so results stay one per memory, scored by the best of
its vectors.

Windows start where the whole-text vector stops seeing (one window width in), overlap by a fifth so a sentence
cut at one edge is whole in the next, and end at a sentence or word boundary when one is near. CJK text has
about one token per character, so its windows are a quarter as wide. At most `MAX_CHUNKS` windows: a text
longer than that many fills them with wider windows (their tails then fall past what the encoder reads).

A mid-length text (one the encoder reads whole, but several sentences long: a 300-800 character chat turn) has
the opposite problem: its one vector averages every sentence, so a question about one of them matches it weakly.
With `focus` set, such a text also gets narrower windows of that width from its start, so each sentence has a
vector of its own (LongMemEval dev: turn ndcg@10 +0.027, session recall_all@5 +0.02; docs/benchmarks.md).
"""

from __future__ import annotations

import re
import uuid

MAX_CHUNKS = 16  # point-id slots per memory: deletes and rewrites address them without a read
CHUNK = "chunk"  # payload key of a window's point: its index (absent on the memory's own point)
_NAMESPACE = uuid.UUID("0c8f4a1e-6b53-4c8e-b1d2-63686e6b7321")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SENTENCE = re.compile(r"[.!?。！？\n]\s*")
_WORD = re.compile(r"\s+")


def chunk_pid(memory_pid: str, i: int) -> str:
    """The point id of a memory's i-th window (stable, so a rewrite replaces it)."""
    return str(uuid.uuid5(_NAMESPACE, f"{memory_pid}#{i}"))


def _width(text: str, chars: int) -> int:
    sample = text[:2000]
    cjk = len(_CJK.findall(sample))
    return max(50, chars // 4) if cjk > len(sample) * 0.3 else chars


def _cut(text: str, at: int, slack: int) -> int:
    """`at` moved back to just after the last sentence or word break within `slack` characters, if any."""
    if at <= 0 or at >= len(text):
        return max(0, min(at, len(text)))
    for pattern in (_SENTENCE, _WORD):  # a sentence break if one is near, else a word break
        best = None
        for m in pattern.finditer(text, max(0, at - slack), at):
            best = m.end()
        if best is not None and best > at - slack:
            return best
    return at


def text_chunks(text: str, chars: int, focus: int = 0) -> list[str]:
    """The windows of `text` past what its own vector sees (`chars` wide; 0 turns chunking off), or, for a text
    its own vector sees whole, windows `focus` wide from its start (0: none; a short text gets neither)."""
    if chars <= 0 or not text:
        return []
    width = _width(text, chars)
    if len(text) <= width * 5 // 4:
        return _windows(text, _width(text, focus), first=0) if focus > 0 and focus < chars else []
    return _windows(text, width, first=None)


def _windows(text: str, width: int, *, first: int | None) -> list[str]:
    """Windows `width` wide overlapping by a fifth, from `first` (None: one stride in, past the whole-text
    vector's own start), at most MAX_CHUNKS of them; none when the text fits in one and a quarter."""
    if len(text) <= width * 5 // 4:
        return []
    stride = width * 4 // 5
    if len(text) > width + stride * MAX_CHUNKS:  # very long: wider windows, still MAX_CHUNKS of them
        stride = -(-(len(text) - width) // MAX_CHUNKS)
        width = stride * 5 // 4
    out: list[str] = []
    start = stride if first is None else first
    while start < len(text) and len(out) < MAX_CHUNKS:
        s = _cut(text, start, width // 8)
        e = len(text) if s + width >= len(text) else _cut(text, s + width, width // 8)
        if e <= s:
            e = min(len(text), s + width)
        piece = text[s:e].strip()
        if piece:
            out.append(piece)
        if e >= len(text):
            break
        start = s + stride
    return out
