"""Query vectors: the embedding of a search's semantic query, started at one point and cached.

* `start` is called once per search, by analyze_query as soon as the text to embed is known (in its one read
  transaction, once the user's own names are read: "Where does Alice live?" is embedded as "Where does User
  live?"): it sets every encoder the search reads the query with to work - MiniLM, the multilingual encoder when
  the scope holds memories of an owner who writes Chinese or Japanese, and the companion encoder when its index is
  on - and returns the `QueryVectors` the search state carries to dense_recall, the last recall path, which reads
  the vectors from it (waiting for them if need be). The encoder (ONNX Runtime / torch, one thread per query) releases the GIL, so its
  ~5 ms overlap the rest of the query analysis, the LangGraph hand-offs, the keyword and the graph paths instead
  of adding to them.
* Each kind of encoder (its class) has one long-lived worker thread (a process opening many data directories
  keeps a handful of threads, not one per encoder instance; no per-search thread churn), so the two encoders run
  side by side; a start asked while its encoder's worker is busy with another search's query is skipped, and that
  search embeds in its own thread when it reads the vector - concurrent searches never queue behind one thread.
* A small LRU (a chatbot often searches the same text twice in a turn: search then get_context, retries,
  several users asking the same thing), and a query under way is not embedded a second time.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

CACHE_SIZE = 2048

_cache: "OrderedDict[tuple[int, str], list[float]]" = OrderedDict()
_pending: dict[tuple[int, str], Future] = {}
_lock = threading.Lock()
_workers: dict[type, tuple[ThreadPoolExecutor, threading.Semaphore]] = {}  # per encoder class: one job at a time


def _after_fork() -> None:
    """A forked child (a server's worker processes) has no worker thread: it makes its own on first use."""
    global _lock
    _lock = threading.Lock()
    _workers.clear()
    _pending.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def clear() -> None:
    """Forget the cached vectors (a benchmark timing the encoder on repeated queries)."""
    with _lock:
        _cache.clear()


def _remember(key: tuple[int, str], vector: list[float]) -> None:
    with _lock:
        _cache[key] = vector
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


def _worker_of(embeddings) -> tuple[ThreadPoolExecutor, threading.Semaphore]:
    with _lock:
        worker = _workers.get(type(embeddings))
        if worker is None:
            worker = _workers[type(embeddings)] = (ThreadPoolExecutor(1, thread_name_prefix="memoryx-query-embed"),
                                                 threading.Semaphore(1))
        return worker


def prefetch(embeddings, text: str) -> None:
    """Start embedding `text` on the worker thread unless it is cached, already under way, or the worker is
    busy (then `embed_query` embeds it in the caller's thread); nothing without an embedder."""
    if embeddings is None:
        return
    key = (id(embeddings), text)
    with _lock:
        if key in _cache or key in _pending:
            return
    executor, idle = _worker_of(embeddings)
    if not idle.acquire(blocking=False):
        return

    def run() -> list[float]:
        return list(embeddings.embed_query(text))

    def done(fut: Future) -> None:
        idle.release()
        with _lock:
            _pending.pop(key, None)
        if not fut.cancelled() and fut.exception() is None:
            _remember(key, fut.result())

    try:
        fut = executor.submit(run)
    except RuntimeError:  # interpreter shutting down: embed in the caller's thread
        idle.release()
        return
    with _lock:
        if not fut.done():
            _pending[key] = fut
    fut.add_done_callback(done)


def embed_query(embeddings, text: str) -> list[float]:
    """The query vector: cached, or the prefetch under way (waited for; its error, if any, raised here as an
    embedding in this thread would), or embedded now."""
    key = (id(embeddings), text)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
        fut = _pending.get(key)
    if fut is not None:
        return fut.result()
    vector = list(embeddings.embed_query(text))
    _remember(key, vector)
    return vector


@dataclass(frozen=True)
class QueryVectors:
    """What a search embeds, decided once: the text, and whether the multilingual encoder reads it beside the main
    one. Plain data (a checkpointed graph run stores it). The vectors come from the work `start` set going, or
    from the cache, or, when neither holds them (the worker was busy), from embedding in the caller's thread
    then."""

    text: str
    multilingual: bool = False

    def main(self, services) -> list[float]:
        """The main encoder's vector of the text."""
        return self.of(services.embeddings)

    def of(self, embeddings) -> list[float]:
        """`embeddings`' vector of the text (the multilingual index's encoder)."""
        return embed_query(embeddings, self.text)


def start(services, text: str, *, multilingual: Callable[[], bool]) -> QueryVectors:
    """The one place a search's query embedding starts: the main encoder on its worker thread, then, when
    `multilingual()` says the multilingual encoder reads it too (asked after the main one has started: it may
    read a store), that one on its own."""
    prefetch(getattr(services, "embeddings", None), text)
    both = bool(multilingual())
    if both:  # the multilingual encoder on its own worker: the two run side by side
        prefetch(services.vectors.multilingual.embeddings, text)
    companion = getattr(getattr(services, "vectors", None), "companion", None)
    if companion is not None:  # the companion encoder, read by the ranking (memoryx.stores.vectors.companion)
        prefetch(companion.embeddings, text)
    return QueryVectors(text, both)
