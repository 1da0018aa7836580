#!/usr/bin/env bash
# Runs a command with a PostgreSQL server of its own: a new cluster in a temporary folder, listening on loopback only
# (a free port) and on a socket in that folder, password authentication (scram-sha-256) for a user `dailyverse`; then
# stops it and removes the folder, whatever the command did. The command sees DAILYVERSE_TEST_POSTGRES and PGPASSWORD,
# so `swift test` runs the PostgreSQL half of the store tests, and DAILYVERSE_TEST_POSTGRES_RESTART, a command that
# restarts the server (for `dailyverse-bench chaos --restart-after`):
#
#   scripts/with-postgres.sh swift test
#   scripts/with-postgres.sh swift test --filter Postgres
#
# Needs Debian's `postgresql` package (15 or later); as root, the server runs as the package's `postgres` user.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: scripts/with-postgres.sh COMMAND [ARGUMENT...]" >&2
    exit 2
fi
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "with-postgres: PostgreSQL's server is not installed (apt-get install postgresql)" >&2
    exit 1
fi

folder=$(mktemp -d "${TMPDIR:-/tmp}/dailyverse-postgres.XXXXXX")
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
printf '%s\n' "$password" >"$folder/password"
as_server=()
if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$folder"
    as_server=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

stop() {
    "${as_server[@]}" "$bin/pg_ctl" -D "$folder/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$folder"
}
trap stop EXIT

"${as_server[@]}" "$bin/initdb" -D "$folder/data" -U dailyverse --auth=scram-sha-256 --pwfile="$folder/password" \
    -E UTF8 --locale=C.UTF-8 >"$folder/initdb.log" 2>&1 || { cat "$folder/initdb.log" >&2; exit 1; }
if ! "${as_server[@]}" "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $folder -c max_connections=200 -c fsync=off" start >/dev/null; then
    cat "$folder/server.log" >&2
    exit 1
fi
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2

# A command that restarts the server (every connection drops), for the chaos check's --restart-after.
printf '#!/bin/sh\nexec %s %q -D %q -l %q -m fast -w -t 60 restart >/dev/null\n' "${as_server[*]:-}" "$bin/pg_ctl" "$folder/data" "$folder/server.log" \
    >"$folder/restart"
chmod 755 "$folder/restart"
export DAILYVERSE_TEST_POSTGRES_RESTART="$folder/restart"
export DAILYVERSE_TEST_POSTGRES="postgresql://dailyverse@127.0.0.1:$port/postgres?sslmode=disable"
export PGPASSWORD="$password"
# The server's Unix socket folder (psql "host=$DAILYVERSE_TEST_POSTGRES_SOCKET port=…"), reachable when loopback is not.
export DAILYVERSE_TEST_POSTGRES_SOCKET="$folder"
status=0
"$@" || status=$?
exit $status
