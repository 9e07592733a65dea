#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster on 127.0.0.1 for the tests and
# prints the `export HERMES_STATE_TEST_PG_URL=…` line; `stop` stops it.
# Sourced by .ci/run; usable by hand:
#   eval "$(bash .ci/postgres.sh start)"   …   bash .ci/postgres.sh stop "$PGDIR"
# Fails loudly (never skips) when PostgreSQL cannot be installed or started.
set -euo pipefail

PORT=${HERMES_STATE_TEST_PG_PORT:-55439}
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

ensure_installed() {
    if ! command -v pg_config >/dev/null || [ ! -x "$(pg_config --bindir)/initdb" ]; then
        echo "installing postgresql-15 and postgresql-contrib (Debian packages)" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 postgresql-contrib >&2
    fi
}

as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        if command -v runuser >/dev/null; then
            runuser -u postgres -- "$@"
        else
            su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
        fi
    else
        "$@"
    fi
}

start() {
    ensure_installed
    local bin dir
    bin=$(pg_config --bindir)
    dir=$(mktemp -d /tmp/hermes-state-pg.XXXXXX)
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; fi
    chmod 700 "$dir"
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --locale=C.UTF-8 --auth=trust >/dev/null
    # Trust auth is safe only because the server listens on 127.0.0.1 alone
    # and its socket is in this private folder.
    if ! as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $dir" start >/dev/null; then
        echo "PostgreSQL did not start (port $PORT); its log:" >&2
        cat "$dir/log" >&2 || true
        rm -rf "$dir"
        exit 1
    fi
    echo "export PGDIR=$dir"
    # How the several-hosts test restarts the server mid-run.
    echo "export HERMES_STATE_TEST_PG_RESTART='bash $SELF restart $dir'"
    echo "export HERMES_STATE_TEST_PG_URL=postgresql://postgres@127.0.0.1:$PORT/postgres"
}

restart() {
    local dir=$1
    as_postgres "$(pg_config --bindir)/pg_ctl" -D "$dir/data" -l "$dir/log" -m fast -w restart >/dev/null
}

stop() {
    local dir=$1
    as_postgres "$(pg_config --bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    rm -rf "$dir"
}

case "${1:-}" in
    start) start ;;
    stop) stop "$2" ;;
    restart) restart "$2" ;;
    *) echo "usage: $0 start | stop DIR | restart DIR" >&2; exit 2 ;;
esac
