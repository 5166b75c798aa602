#!/usr/bin/env bash
# A throwaway PostgreSQL server for the end-to-end tests, from Debian's package, on loopback only.
#
#   scripts/postgres.sh install          install the server if its binaries are missing (CI calls this)
#   scripts/postgres.sh start            install if needed, create a cluster in a new temp dir, start it on a
#                                        free 127.0.0.1 port, create the database "airflow"; prints
#                                        TESSERA_PG_DATA=<dir> and TESSERA_PG_URL=<SQLAlchemy URL>
#   scripts/postgres.sh stop <dir>       stop the cluster started in <dir> and delete it
#
# Root cannot run postgres, so as root the cluster belongs to the "postgres" user the package creates.
# The cluster is for tests only: trust authentication on 127.0.0.1, no durability (fsync off).
set -euo pipefail

pg_bin() {
    # Debian installs the server outside PATH, one directory per major version; take the newest.
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [[ -n "$found" && -x "$found/initdb" && -x "$found/pg_ctl" ]] && echo "$found"
}

install() {
    if ! pg_bin >/dev/null; then
        echo "postgres.sh: installing PostgreSQL from Debian's package" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    pg_bin >/dev/null || { echo "postgres.sh: no initdb/pg_ctl under /usr/lib/postgresql/*/bin" >&2; exit 1; }
}

# Run a server binary as the cluster's owner: "postgres" when we are root, ourselves otherwise.
as_owner() {
    if [[ $(id -u) == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    install
    local bin data port
    bin=$(pg_bin)
    # Outside pytest's private temp dirs: the postgres user must be able to reach it.
    data=$(mktemp -d /tmp/tessera-pg.XXXXXX)
    chmod 755 "$data"
    [[ $(id -u) == 0 ]] && chown postgres: "$data"
    as_owner "$bin/initdb" -D "$data/cluster" -U postgres --auth=trust --encoding=UTF8 --no-sync >"$data/initdb.log" 2>&1 \
        || { cat "$data/initdb.log" >&2; exit 1; }
    # A port can be taken between choosing and binding it (another test session): retry a few times.
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        if as_owner "$bin/pg_ctl" -D "$data/cluster" -l "$data/server.log" -w -t 60 start \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c max_connections=300 \
                -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null; then
            "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres airflow
            echo "TESSERA_PG_DATA=$data"
            echo "TESSERA_PG_URL=postgresql+psycopg2://postgres@127.0.0.1:$port/airflow"
            return 0
        fi
    done
    cat "$data/server.log" >&2
    exit 1
}

stop() {
    local data=${1:?usage: postgres.sh stop <dir printed as TESSERA_PG_DATA>}
    local bin
    bin=$(pg_bin)
    if [[ -f "$data/cluster/postmaster.pid" ]]; then
        as_owner "$bin/pg_ctl" -D "$data/cluster" -m immediate -w stop >/dev/null || true
    fi
    rm -rf "$data"
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop "${2:-}" ;;
    *) echo "usage: $0 install | start | stop <dir>" >&2; exit 2 ;;
esac
