"""`python -m memoryx.cli` (the console script `memoryx` calls the same `main`)."""

from memoryx.cli import main

raise SystemExit(main())
