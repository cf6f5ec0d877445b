"""How many more connections a PostgreSQL server admits: `memoryx serve` compares it with what its workers
can open (Settings.pg_connections_per_process) before starting any."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import make_url

_BUDGET = sa.text(
    "SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int, "
    "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
    "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())")


def connection_budget(url: str) -> tuple[int, int, int, int] | None:
    """(connections this role may still open, max_connections, slots reserved for superusers that this role
    cannot use, client connections open now) on the server of `url`, or None when it cannot be asked."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")  # as SQLStore opens it
    engine = sa.create_engine(parsed, poolclass=sa.pool.NullPool, connect_args={"connect_timeout": 10})
    try:
        with engine.connect() as conn:
            max_connections, reserved, superuser, others = conn.execute(_BUDGET).one()
    except sa.exc.SQLAlchemyError:
        return None
    finally:
        engine.dispose()
    reserved = 0 if superuser else reserved
    return max_connections - reserved - others, max_connections, reserved, others
