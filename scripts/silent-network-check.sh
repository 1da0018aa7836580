#!/usr/bin/env bash
# A network that goes silent under a waiting statement (a machine powered off, a cable cut, a NAT or firewall that
# forgot the connection: no packet says the connection is over) ends that statement within about a minute, with one
# line and a non-zero exit, rather than leaving it waiting for ever; and the server lets go of that client's session
# (its transaction, its locks) as soon, rather than after its own two hours.
#
#   scripts/silent-network-check.sh .build/debug/dailyverse
#
# In a network namespace of its own (unshare -n, which needs root), a PostgreSQL server on loopback
# (scripts/with-postgres.sh). A session on the server's Unix socket holds the device table locked; two `devices list`
# commands on loopback wait for it: one with the address as an operator writes it (the default TCP keep-alive), one with
# `keepalives=0&tcp_user_timeout=0`, the control. Then loopback is taken down, which leaves both connections open
# with nothing to say they are gone. The first must end, unavailable, within LIMIT seconds of the cut, and the server
# must have ended its session by then; the control must still be waiting, its session still there (so what ended the
# first is its keep-alive). Where no namespace can be made, it says so and passes: nothing else on the machine is
# touched.
set -euo pipefail

limit=120
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: scripts/silent-network-check.sh DAILYVERSE_BINARY" >&2
    exit 2
fi
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."

case "${1:-}:${DAILYVERSE_SILENT_NETWORK_STAGE:-}" in
*:)
    if ! unshare -n true 2>/dev/null; then
        echo "silent network: skipped: no network namespace can be made here (unshare -n needs root)"
        exit 0
    fi
    exec env DAILYVERSE_SILENT_NETWORK_STAGE=namespace unshare -n "$0" "$binary"
    ;;
*:namespace)
    ip link set lo up
    exec env DAILYVERSE_SILENT_NETWORK_STAGE=server scripts/with-postgres.sh "$0" "$binary"
    ;;
esac

# With the server, in the namespace.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/dailyverse-silent.XXXXXX")
socket_port=${DAILYVERSE_TEST_POSTGRES#*127.0.0.1:}
socket_port=${socket_port%%/*}
local_psql() { psql "host=$DAILYVERSE_TEST_POSTGRES_SOCKET port=$socket_port user=dailyverse dbname=postgres" -X -q -At "$@"; }
children=()
cleanup() {
    # The commands themselves too: the control, across a cut network, would wait for ever. (Quietly: the shell
    # reports each job a signal ended.)
    exec 2>/dev/null
    for pid in "${children[@]}" $(cat "$scratch"/*.pid 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT

# The schema first (the commands below only read).
"$binary" devices list --db "$DAILYVERSE_TEST_POSTGRES" >/dev/null
local_psql -c "BEGIN" -c "LOCK TABLE device IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(600)" >/dev/null 2>&1 &
children+=($!)
# Waits, at most 60 s, until the statement `$2` reads `$3`; fails naming `$1` otherwise (or once a command has ended).
await() {
    local what=$1 query=$2 expected=$3 start
    start=$(date +%s)
    until [ "$(local_psql -c "$query" 2>/dev/null)" = "$expected" ]; do
        if [ $(($(date +%s) - start)) -ge 60 ] || compgen -G "$scratch/*.end" >/dev/null; then
            echo "silent network: FAILED: $what did not happen within 60 s" >&2
            for log in "$scratch"/*.err; do [ -e "$log" ] && sed "s|^|  $(basename "$log" .err): |" "$log" >&2; done
            exit 1
        fi
        sleep 0.2
    done
}
await "the device table locked" "SELECT count(*) FROM pg_locks WHERE relation = 'device'::regclass AND mode = 'AccessExclusiveLock' AND granted" 1

run() {
    local name=$1 address=$2
    (
        "$binary" devices list --db "$address" >"$scratch/$name.out" 2>"$scratch/$name.err" &
        echo $! >"$scratch/$name.pid"
        status=0
        wait $! || status=$?
        echo "$status $(date +%s%3N)" >"$scratch/$name.end"
    ) &
    children+=($!)
}
run keepalive "$DAILYVERSE_TEST_POSTGRES&application_name=silent-keepalive"
run control "$DAILYVERSE_TEST_POSTGRES&application_name=silent-control&keepalives=0&tcp_user_timeout=0"
# The server's sessions of each command that wait (a command's other connection, made for its migrations, is closed).
sessions() { local_psql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'silent-$1' AND wait_event_type = 'Lock'"; }
# Both wait for the lock: their statements are sent and answered by nothing yet.
await "both commands waiting for the lock" "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'" 2
ip link set lo down
cut=$(date +%s%3N)
echo "silent network: loopback down, two commands waiting on the server across it"

while { [ ! -e "$scratch/keepalive.end" ] || [ "$(sessions keepalive)" != 0 ]; } && [ $(($(date +%s%3N) - cut)) -lt $((limit * 1000)) ]; do
    sleep 0.5
done
server_let_go=$(($(date +%s%3N) - cut))
failed=0
if [ ! -e "$scratch/keepalive.end" ]; then
    echo "silent network: FAILED: the command with the default keep-alive still waits $limit s after the cut" >&2
    failed=1
else
    read -r status ended <"$scratch/keepalive.end"
    line=$(cat "$scratch/keepalive.err")
    seconds=$(((ended - cut + 500) / 1000))
    if [ "$status" = 0 ]; then
        echo "silent network: FAILED: the command ended with status 0 across a cut network" >&2
        failed=1
    elif [ "$(printf '%s\n' "$line" | wc -l)" != 1 ] || ! printf '%s' "$line" | grep -q "connection was lost"; then
        echo "silent network: FAILED: expected one line saying the connection was lost, got: $line" >&2
        failed=1
    else
        echo "silent network: the command ended ${seconds} s after the cut (status $status): $line"
    fi
fi
if [ "$(sessions keepalive)" != 0 ]; then
    echo "silent network: FAILED: the server still holds the session of the command with the keep-alive $limit s after the cut" >&2
    failed=1
else
    echo "silent network: the server ended that command's session within $(((server_let_go + 500) / 1000)) s of the cut"
fi
if [ -e "$scratch/control.end" ]; then
    echo "silent network: FAILED: the control (keepalives=0&tcp_user_timeout=0) ended too, so the check shows nothing: $(cat "$scratch/control.err")" >&2
    failed=1
else
    echo "silent network: the control, keep-alive off, still waits (as every connection did before the keep-alive)"
fi
if [ "$(sessions control)" != 1 ]; then
    echo "silent network: FAILED: the control's session is gone too, so the check shows nothing of the server's end" >&2
    failed=1
fi
exit $failed
