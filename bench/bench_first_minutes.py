"""A newcomer's first commands, timed end to end as processes (interpreter start, imports, stores, the
command, exit): `memoryx setup` with the encoder already built, the first add in a new data directory,
a second add, then the embedded read commands and a search.

    HF_HUB_OFFLINE=1 python3 bench/bench_first_minutes.py                       # this checkout
    HF_HUB_OFFLINE=1 python3 bench/bench_first_minutes.py --root /tmp/old       # another checkout (its parent
                                                                               # folder goes on PYTHONPATH)

Each read command runs --repeat times; the table gives the median and the slowest wall time, and the
median CPU time (user + system, of the command and the processes it started): on a shared machine the wall
time moves with the load (printed beside the figures), the CPU time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CPU: list[float] = []  # CPU seconds of each timed command, in order


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict) -> tuple[float, str]:
    cpu0, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    took = time.perf_counter() - started
    CPU.append(_children_cpu() - cpu0)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[3:])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return took, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]), help="the checkout to measure")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-setup", action="store_true", help="for a checkout without `memoryx setup`")
    args = ap.parse_args()
    root = Path(args.root).resolve()
    env = {**os.environ, "PYTHONPATH": str(root.parent), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    rows: list[tuple[str, float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        mx = [sys.executable, "-m", "memoryx.cli"]
        env["MEMORYX_ENV_FILE"] = str(Path(tmp) / "none.env")
        if not args.skip_setup:
            took, _ = timed([*mx, "setup"], env)
            rows.append(("memoryx setup (encoder already built)", took, took, CPU[-1]))
        took, out = timed([*mx, "add", "I live in Berlin and I work at Acme.", "--user-id", "u", "--data-dir", str(data),
                           "--json"], env)
        rows.append(("first add in a new data directory", took, took, CPU[-1]))
        memory_id = json.loads(out)["results"][0]["id"]
        took, _ = timed([*mx, "add", "I like jazz.", "--user-id", "u", "--data-dir", str(data)], env)
        rows.append(("second add", took, took, CPU[-1]))
        for label, command in (("list", ["list", "--user-id", "u"]), ("get", ["get", memory_id]),
                               ("history", ["history", memory_id]), ("judgments list", ["judgments", "list"]),
                               ("search", ["search", "where do I live?", "--user-id", "u"])):
            runs = [timed([*mx, *command, "--data-dir", str(data)], env)[0] for _ in range(args.repeat)]
            rows.append((label, statistics.median(runs), max(runs), statistics.median(CPU[-args.repeat:])))
    load = os.getloadavg()
    print(f"checkout {root}   load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}   "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{'command':<42} {'median s':>9} {'max s':>7} {'CPU s':>7}")
    for label, median, worst, cpu in rows:
        print(f"{label:<42} {median:>9.2f} {worst:>7.2f} {cpu:>7.2f}")


if __name__ == "__main__":
    main()
