"""memoryx.runtime.process_start: the collector is off while a command's stack imports, then on again with
what exists by then frozen; a caller that switched it off itself keeps it off."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from memoryx.runtime.process_start import collector_paused

ROOT = Path(__file__).resolve().parents[2]


def _in_a_fresh_interpreter(code: str, cwd: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT.parent), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1",
                               "MEMORYX_DATA_DIR": str(cwd / "data"), "MEMORYX_ENV_FILE": str(cwd / "none.env")})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_collector_is_off_inside_and_on_after_with_the_heap_frozen(tmp_path):
    report = _in_a_fresh_interpreter(
        "import gc, json\n"
        "from memoryx.runtime.process_start import collector_paused\n"
        "with collector_paused():\n"
        "    inside = gc.isenabled()\n"
        "    import email.parser, json.decoder\n"
        "print(json.dumps({'inside': inside, 'after': gc.isenabled(), 'frozen': gc.get_freeze_count()}))\n",
        tmp_path)
    assert report["inside"] is False and report["after"] is True
    assert report["frozen"] > 10_000  # the modules' objects are in the permanent generation


def test_a_collector_switched_off_by_the_caller_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_console_script_has_the_collector_on_once_its_stores_are_open(tmp_path):
    report = _in_a_fresh_interpreter(
        "import gc, json, sys\n"
        "from memoryx.cli import _open_memory, build_parser\n"
        "args = build_parser().parse_args(['list', '--user-id', 'u'])\n"
        "memory = _open_memory(args, process_ends=True)\n"
        "print(json.dumps({'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count(), "
        "'opened': type(memory).__name__}))\n", tmp_path)
    assert report == {"enabled": True, "frozen": report["frozen"], "opened": "RecordReader"}
    assert report["frozen"] > 10_000
