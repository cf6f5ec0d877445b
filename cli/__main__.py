"""`python -m memoryx.cli` (the console script `memoryx` calls the same `run`)."""

from memoryx.cli import run

run()
