#!/usr/bin/env bash
# Writes a database as a given build of dailyverse leaves it after use: content seeded, a commentary import, a published
# month start, a guest and an account with settings, a bookmark, devices, onboarding progress, hints and app events, and
# a day's outbox. The upgrade test (Tests/StorageTests) opens the gzipped result with the current build and checks that
# nothing was lost. Run it with the build of the release being frozen, before a change of schema:
#
#   scripts/make-upgrade-fixture.sh .build/debug/dailyverse Tests/StorageTests/Fixtures/<name>.sqlite.gz
#
# Needs curl and gzip. Uses a temporary folder and a loopback port; leaves nothing else behind.
set -euo pipefail
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
server=; trap '[ -n "$server" ] && kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
db=$work/dailyverse.sqlite
now=2025-03-01T04:00:00Z
dv() { "$binary" "$@" --db "$db" --data "$data" --now "$now"; }

dv today --date 2025-03-01 --tz Asia/Baghdad > /dev/null
cat > "$work/notes.jsonl" <<'JSONL'
{"verses": "1:1", "layer": "contemporary", "body": "A team note kept by an import: it must survive every upgrade.", "source": {"provenance": "editorial"}}
JSONL
dv import commentary "$work/notes.jsonl" > /dev/null
dv sighting set 1446 10 2025-03-31 > /dev/null
dv devices add --platform apns --token "$(printf 'ab%.0s' $(seq 32))" --tz Asia/Baghdad --time 07:30 --locale ar > /dev/null

port=$((20000 + RANDOM % 20000))
"$binary" serve --db "$db" --data "$data" --now "$now" --listen "127.0.0.1:$port" --sink "jsonl:$work/spool" --log-level warning &
server=$!
api() { curl -sS --fail-with-body --max-time 10 -H 'content-type: application/json' "$@"; }
token() { python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'; }
base=http://127.0.0.1:$port
curl -s --retry 50 --retry-connrefused --retry-delay 0 -o /dev/null "$base/health" 2>/dev/null
guest=$(api -X POST "$base/v1/guests" | token)
api -X PUT "$base/v1/bookmarks/94:5-6" -H "authorization: Bearer $guest" > /dev/null
api -X POST "$base/v1/devices" -H "authorization: Bearer $guest" \
    -d '{"platform": "fcm", "token": "fcm-token-of-the-guest-0123456789", "timezone": "Europe/London"}' > /dev/null
account=$(api -X POST "$base/v1/accounts" -d '{"email": "reader@example.org", "password": "correct horse battery", "display_name": "Reader"}' | token)
api -X PATCH "$base/v1/me/settings" -H "authorization: Bearer $account" \
    -d '{"reminder_time": "05:45", "timezone": "Asia/Tehran", "calendar": "tabular", "adjustment": 1, "locale": "ar"}' > /dev/null
api -X PUT "$base/v1/bookmarks/2:255" -H "authorization: Bearer $account" > /dev/null
api -X POST "$base/v1/devices" -H "authorization: Bearer $account" \
    -d "{\"platform\": \"apns\", \"token\": \"$(printf 'cd%.0s' $(seq 32))\", \"timezone\": \"Asia/Tehran\"}" > /dev/null
for event in '{"type": "view"}' '{"type": "advance"}' '{"type": "advance"}'; do
    api -X POST "$base/v1/onboarding/events" -H "authorization: Bearer $account" -d "$event" > /dev/null
done
api -X POST "$base/v1/events" -H "authorization: Bearer $account" -d '{"name": "verse_opened"}' > /dev/null
api -X POST "$base/v1/events" -H "authorization: Bearer $account" -d '{"name": "verse_opened"}' > /dev/null
api -X POST "$base/v1/hints/layers_swipe/shown" -H "authorization: Bearer $account" > /dev/null
api -X POST "$base/v1/hints/layers_swipe/dismissed" -H "authorization: Bearer $account" > /dev/null
api -X POST "$base/v1/hints/tutorial" -H "authorization: Bearer $account" -d '{"enabled": true}' > /dev/null
kill "$server"; wait "$server" 2>/dev/null || true

# Fires into the outbox: delivered to a spool folder when on time, missed when more than the grace period late.
for at in 2025-03-01T04:31:00Z 2025-03-01T08:01:00Z 2025-03-02T04:31:00Z; do
    "$binary" serve --once --db "$db" --data "$data" --now "$at" --sink "jsonl:$work/spool" > /dev/null
done
"$binary" status --db "$db" --data "$data" --now 2025-03-01T23:00:00Z
# The bundled Quran text is seeded again from data/ whatever the database holds; keep one sura of it to keep the file small.
sqlite3 "$db" "DELETE FROM ayah_text WHERE surah > 1; PRAGMA wal_checkpoint(TRUNCATE); VACUUM;" 2>/dev/null \
    || python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM ayah_text WHERE surah > 1"); c.commit(); c.execute("PRAGMA wal_checkpoint(TRUNCATE)"); c.execute("VACUUM"); c.close()' "$db"
mkdir -p "$(dirname "$out")"
gzip -9 -n -c "$db" > "$out"
echo "wrote $out ($(wc -c < "$out") bytes)"
