"""In-process consolidation: an embedded Memory with consolidate_in_process runs passes in a background
thread every consolidate_interval_s (the same cycle as `memoryx serve`), and close() stops the thread. Off by
default."""

from __future__ import annotations

import threading
import time

from memoryx import Memory
from tests.support import shared_embeddings


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.is_alive()}


def test_off_by_default(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        assert m.scheduler is None


def test_a_background_thread_consolidates_and_stops_on_close(tmp_path):
    m = Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings(),
               consolidate_in_process=True, consolidate_interval_s=0.3)
    try:
        for text in ("I keep bees on the roof", "I keep bees on the roof.", "My hives are on the roof"):
            m.add(text, user_id="zoe", infer=False)
        deadline = time.time() + 30

        def passes() -> list[dict]:
            return [j for j in m.list_judgments(user_id="zoe") if j.get("operation_type") == "CONSOLIDATE"]

        def staged() -> list[dict]:
            return [r for r in m.get_all(user_id="zoe")["results"] if r["status"] == "staged"]

        # a pass logs its judgment before its cycle ends and is counted: wait for both, and for a pass after the
        # last add (one may run between the adds: the first add loads the encoders, longer than an interval)
        while (not passes() or m.scheduler.cycles < 1 or staged()) and time.time() < deadline:
            time.sleep(0.1)
        assert passes(), "no consolidation pass was logged"
        assert m.scheduler.cycles >= 1
        assert m.get_all(user_id="zoe")["results"] and not staged()  # a pass has seen them
        assert m.scheduler.alive and "memoryx-consolidate" in _threads()
    finally:
        m.close()
    assert not m.scheduler.alive
