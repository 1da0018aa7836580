#!/usr/bin/env bash
# What emission into PostgreSQL could reach at best, with every outbox row made inside the server (no client, no round
# trip, no planner), as a ratio to the `emit` benchmark's baseline, a COPY of as many rows of the same size into a
# table with no index; for today's outbox and for one keyed by its one row per device and day. The steps are in
# scripts/emission-ceiling.sql. Run under a server of its own:
#
#   scripts/with-postgres.sh scripts/emission-ceiling.sh [DEVICES]      (default 200000)
set -euo pipefail

devices=${1:-200000}
if ! [[ "$devices" =~ ^[0-9]+$ ]] || [ "$devices" -lt 1440 ] || [ "$devices" -gt 10000000 ]; then
    echo "emission-ceiling: DEVICES must be a whole number from 1440 to 10000000, not '$devices'" >&2
    exit 2
fi
if [ -z "${DAILYVERSE_TEST_POSTGRES:-}" ]; then
    echo "emission-ceiling: no server: run it under scripts/with-postgres.sh (or set DAILYVERSE_TEST_POSTGRES)" >&2
    exit 2
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/dailyverse-ceiling.XXXXXX")
schema="dailyverse_ceiling_$$"
cleanup() {
    PGOPTIONS="-c client_min_messages=warning" psql "$DAILYVERSE_TEST_POSTGRES" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
    rm -rf "$scratch"
}
trap cleanup EXIT

echo "emission ceiling: $devices devices, a day of passes a minute each, rows of about 1 KB"
for keyed in false true; do
    if [ "$keyed" = true ]; then outbox="an outbox keyed by (local date, device)"; else outbox="today's outbox (its own id, a unique key)"; fi
    PGOPTIONS="-c client_min_messages=warning" psql "$DAILYVERSE_TEST_POSTGRES" -q -c "DROP SCHEMA IF EXISTS $schema CASCADE" \
        -c "CREATE SCHEMA $schema" >/dev/null
    PGOPTIONS="-c search_path=$schema" psql "$DAILYVERSE_TEST_POSTGRES" -q -X -v n="$devices" -v rows="$scratch/rows.tsv" -v keyed="$keyed" \
        -f "$(dirname "$0")/emission-ceiling.sql" >"$scratch/out"
    awk -v outbox="$outbox" '
        /^[ABCDE]$/ { step = $1; next }
        /^Time: / && step != "" { ms[step] = $2; step = "" }
        END {
            printf "%s:\n", outbox
            printf "  A  COPY into a table with no index (the baseline)          %7.2f s\n", ms["A"] / 1000
            printf "  B  COPY into a table like the outbox                       %7.2f s  ratio %.2f\n", ms["B"] / 1000, ms["A"] / ms["B"]
            printf "  C  made in the server, a statement a minute, no queue      %7.2f s  ratio %.2f\n", ms["C"] / 1000, ms["A"] / ms["C"]
            printf "  D  C, and each device'"'"'s queue entry moved a day on        %7.2f s  ratio %.2f\n", ms["D"] / 1000, ms["A"] / ms["D"]
            printf "  E  C by the quarter hour, its devices share-locked        %7.2f s  ratio %.2f\n", ms["E"] / 1000, ms["A"] / ms["E"]
        }' "$scratch/out"
done
