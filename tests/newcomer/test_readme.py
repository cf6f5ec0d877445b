"""A newcomer with only the README: clone the repository into a temporary folder, run the README's commands
as written (the two commands, the command the demo's closing hint prints, the ten-line example) and check what
they print, so the README cannot drift from the code. The clone's .venv sees the machine's installed packages
and the shared encoder cache, so the setup installs only the clone itself (`scripts/setup.sh` says how a
machine with nothing installed is set up the same way). Part of the suite CI runs (`newcomer`, `slow`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.newcomer]


def _blocks(readme: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", readme, flags=re.S)


def _commands(block: str) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    target = tmp_path_factory.mktemp("newcomer") / "memoryx"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True, timeout=300)
    return target


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    # a newcomer's shell: no PYTHONPATH, MEMORYX_* or PYTEST_* (an xdist worker's name) of this test run, the
    # clone's own .venv
    out = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMORYX_", "PYTEST_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out["MEMORYX_ENV_FILE"] = str(tmp_path_factory.mktemp("newcomer-env") / "none.env")
    # its own temporary folder: the inner pytest's basetemp (pytest-of-<user>) and every temp file of the clone
    # land there, so the inner run never scans, cleans or locks the outer run's pytest folders
    tmp = str(tmp_path_factory.mktemp("newcomer-tmp"))
    out.update(TMPDIR=tmp, TEMP=tmp, TMP=tmp)
    out["COLUMNS"] = "200"
    return out


def _run(command: str, cwd: Path, env: dict, timeout: float = 1800) -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{command}: rc={proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def demo(clone, env) -> subprocess.CompletedProcess:
    first = _commands(_blocks((clone / "README.md").read_text(encoding="utf-8"), "bash")[0])
    assert first[0] == "bash scripts/demo.sh" and first[1] == "bash scripts/test.sh", first
    return _run(first[0], clone, env)


def test_the_first_command_sets_up_and_runs_the_demo(clone, demo):
    assert (clone / ".venv" / "bin" / "memoryx").exists()
    assert "Encoder ready" in demo.stdout
    assert "offline rule-based model" in demo.stdout
    assert "Munich" in demo.stdout and "乌龙茶" in demo.stdout
    assert (clone / ".memoryx" / "memoryx.db").exists()


def test_the_demos_closing_hint_shows_the_demos_memories(clone, env, demo):
    hints = re.findall(r"Next: `([^`]+)`", demo.stdout)
    assert hints, demo.stdout[-2000:]
    assert hints[-1] in (clone / "README.md").read_text(encoding="utf-8")  # the README shows the same command
    listed = _run(hints[-1], clone, env, timeout=300)
    assert "Munich" in listed.stdout and "乌龙茶" in listed.stdout, listed.stdout


def test_the_ten_line_example_runs(clone, env, demo):
    example = _blocks((clone / "README.md").read_text(encoding="utf-8"), "python")[0]
    assert len(example.strip().splitlines()) <= 12
    out = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-c", example], cwd=clone, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-4000:]
    assert "Munich" in out.stdout.splitlines()[0], out.stdout  # the move updated the home memory
    assert "2026-05-07" in out.stdout  # the dated trip, by the day it happened


def test_the_second_command_runs_the_tests(clone, env, demo):
    if shutil.which("pg_isready") is None:
        pytest.skip("scripts/test.sh needs the machine's PostgreSQL tools")
    out = _run("bash scripts/test.sh tests/architecture/test_docs.py", clone, env, timeout=900)
    assert re.search(r"\d+ passed", out.stdout), out.stdout
    assert list(Path(env["TMPDIR"]).glob("pytest-of-*/pytest-*")), "the inner pytest's basetemp is elsewhere"
