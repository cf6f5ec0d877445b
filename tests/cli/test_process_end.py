"""How a CLI command ends its process (memoryx.runtime.process_exit): output complete, exit handlers and
worker threads finished, the vector shards usable by the next process, a reader that stops early not
reported as an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from memoryx.api.memory import Memory
from tests.cli.test_cli import EXE, run
from tests.support import shared_embeddings

PROBE = """
import atexit, sys, threading, time
from memoryx.runtime.process_exit import end_process
out = sys.argv[1]
def slow_worker():
    time.sleep(0.3)
    with open(out, "a") as f: f.write("worker\\n")
threading.Thread(target=slow_worker).start()  # not a daemon: the interpreter would wait for it
atexit.register(lambda: open(out, "a").write("atexit\\n"))
print("printed before the end", end="")  # left in the buffer: end_process flushes it
end_process(3)
print("never")
"""


def test_end_process_waits_for_threads_runs_exit_handlers_and_flushes(tmp_path):
    marks = tmp_path / "marks.txt"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(marks)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "printed before the end"
    assert marks.read_text().splitlines() == ["worker", "atexit"]


def test_commands_in_a_row_share_the_data_directory(tmp_path):
    """A search leaves the shards it only read to the kernel; the next process opens them at once, and the
    memories an add wrote (flushed and closed by that add) are all there."""
    data = tmp_path / "data"
    user = f"pe-{uuid.uuid4().hex[:6]}"
    run(data, "add", "I live in Lisbon.", "--user-id", user, "--json")
    first = json.loads(run(data, "search", "where do I live?", "--user-id", user, "--json").stdout)
    assert "Lisbon" in first["results"][0]["memory"]
    run(data, "add", "My sister is called Ines.", "--user-id", user, "--json")
    again = json.loads(run(data, "search", "what is my sister called?", "--user-id", user, "--json").stdout)
    assert "Ines" in again["results"][0]["memory"]
    listed = json.loads(run(data, "list", "--user-id", user, "--json").stdout)
    assert len(listed["results"]) == 2
    owners = list((data / "qdrant").rglob("*owner*"))
    assert owners == [], f"a shard still names an owner process after the commands ended: {owners}"


def test_a_reader_that_stops_early_is_not_an_error(tmp_path):
    data = tmp_path / "data"
    user = f"pe-{uuid.uuid4().hex[:6]}"
    # written in this process (closed before the command starts): what is on trial is how `list` ends
    with Memory(data_dir=data, graph_backend="none", embeddings=shared_embeddings()) as m:
        for fact in ("I like tea.", "I like chess.", "I live in Oslo."):
            m.add(fact, user_id=user, infer=False)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes (as `| head -0` would be)
    cmd = [EXE, "list", "--user-id", user] if EXE else [sys.executable, "-m", "memoryx.cli", "list", "--user-id", user]
    proc = subprocess.run(cmd, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300,
                          env={**os.environ, "MEMORYX_DATA_DIR": str(data), "MEMORYX_ENV_FILE": str(data / "none.env"),
                               "PYTHONUNBUFFERED": "1"})
    os.close(write_end)
    assert proc.returncode == 141 and proc.stderr == "", proc.stderr
