#!/usr/bin/env bash
# Fuzzes the HTTP API against data/openapi.yaml with Schemathesis: a real `dailyverse serve` on a loopback port the kernel picks
# with a fresh database, every operation, all checks, a bounded number of examples per operation. Fails on any 5xx,
# any response the document does not describe (status, headers, content type, body) and any request the server
# accepts or refuses against what the document says.
#
#   scripts/api-fuzz.sh [BINARY]          BINARY defaults to .build/debug/dailyverse
#
# Environment:
#   FUZZ_EXAMPLES  examples per operation in the fuzzing and stateful phases (default 25)
#   FUZZ_SEED      Schemathesis seed (default 20261123, so that CI is repeatable); "random" for a new one each run
#   FUZZ_WORKERS   concurrent workers (default 1: Python 3.11's ast module, which Hypothesis uses, is not thread-safe)
#   FUZZ_PYTHON    the Python that makes the virtual environment (default python3)
#   FUZZ_VENV      the virtual environment (default .venv-fuzz/ in the repository; made and filled on first use)
#   FUZZ_KEEP      1: keep the run's folder (database, server log, reports) even when the run passes
#
# Needs python3 with venv (Debian: python3-venv) and PyPI for the first install; no other network than loopback.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=${1:-$root/.build/debug/dailyverse}
examples=${FUZZ_EXAMPLES:-25}
seed=${FUZZ_SEED:-20261123}
workers=${FUZZ_WORKERS:-1}
python=${FUZZ_PYTHON:-python3}
venv=${FUZZ_VENV:-$root/.venv-fuzz}
requirements=$root/scripts/api-fuzz-requirements.txt
spec=$root/data/openapi.yaml

say() { printf 'api-fuzz: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

[ -x "$binary" ] || die "no server binary at $binary (build it with 'swift build', or pass its path)"
[ -f "$spec" ] || die "no $spec"
case $examples in '' | *[!0-9]*) die "FUZZ_EXAMPLES must be a whole number" ;; esac
case $workers in '' | *[!0-9]*) die "FUZZ_WORKERS must be a whole number" ;; esac
if [ "$seed" = random ]; then seed=$(( (RANDOM << 15) | RANDOM )); fi
case $seed in '' | *[!0-9]*) die "FUZZ_SEED must be a whole number or 'random'" ;; esac
started=$SECONDS

# --- Schemathesis, pinned, in its own virtual environment -------------------------------------------------------
command -v "$python" >/dev/null || die "$python is missing (Debian: apt-get install python3 python3-venv)"
if [ ! -x "$venv/bin/python" ]; then
    say "creating the virtual environment $venv"
    "$python" -m venv "$venv" || die "$python -m venv failed (Debian: apt-get install python3-venv)"
fi
# The environment ignores itself, so that nothing in it is ever committed.
[ -f "$venv/.gitignore" ] || printf '*\n' >"$venv/.gitignore"
if ! cmp -s "$requirements" "$venv/.installed-requirements"; then
    say "installing $(grep -v '^#' "$requirements" | tr '\n' ' ')"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --requirement "$requirements"
    cp "$requirements" "$venv/.installed-requirements"
fi
schemathesis=$venv/bin/schemathesis
say "$("$schemathesis" --version)"

# --- A fresh server on a free loopback port ---------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/dailyverse-fuzz.XXXXXX")
server_pid=
status=1
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ "$status" -eq 0 ] && [ "${FUZZ_KEEP:-0}" != 1 ]; then
        rm -rf "$work"
    else
        say "kept $work (server.log, schemathesis.log, report/)"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The run's own settings only: none of the caller's DAILYVERSE_* variables, no /etc/dailyverse/config.toml.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^DAILYVERSE_' || true)
: >"$work/config.toml"
# Throttles and the devices per user raised far past what the run sends, so that its requests, all from one address
# and a few sessions, are judged by what they are rather than refused for their number.
export DAILYVERSE_THROTTLE_SIGN_IN=100000/1s DAILYVERSE_THROTTLE_GUESTS=100000/1s DAILYVERSE_THROTTLE_ACCOUNTS=100000/1s
export DAILYVERSE_THROTTLE_WRITES=100000/1s DAILYVERSE_MAX_DEVICES_PER_USER=10000
# The push service the run's Web Push endpoints are moved onto (the hooks below): the document's pattern takes any host,
# the server only the push services it sends to.
export DAILYVERSE_WEB_PUSH_HOSTS=push.example.org

py() { "$venv/bin/python" - "$@"; }

# Port 0: the kernel's choice, which the server's log names (a port picked here and freed for the server could be taken
# meanwhile).
"$binary" serve --config "$work/config.toml" --db "$work/db.sqlite" --data "$root/data" --listen "127.0.0.1:0" \
    --sink "jsonl:$work/spool" >"$work/server.log" 2>&1 &
server_pid=$!

# Up within two minutes (the first start seeds the database): the port its log names once it listens, then a guest,
# so that the API works before it is fuzzed. The port on standard output, why not on standard error.
port=$(py "$work/server.log" "$server_pid" <<'EOF'
import json, re, sys, time, urllib.request
log, pid = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 120
while True:
    with open(log, errors="replace") as text:
        found = re.search(r"API listening address=127\.0\.0\.1:(\d+)", text.read())
    if found:
        break
    try:
        with open(f"/proc/{pid}/stat") as stat:
            exited = stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        exited = True
    if exited:
        sys.exit("the server exited")
    if time.monotonic() > deadline:
        sys.exit("the server did not listen within 120 s")
    time.sleep(0.2)
request = urllib.request.Request(f"http://127.0.0.1:{found.group(1)}/v1/guests", method="POST")
with urllib.request.urlopen(request, timeout=10) as response:
    body = json.load(response)
    assert response.status == 201 and len(body["token"]) == 43, (response.status, body)
print(found.group(1))
EOF
) || { tail -n 40 "$work/server.log" >&2; die "the server did not come up"; }
base=http://127.0.0.1:$port
say "server $binary (pid $server_pid) on $base, database $work/db.sqlite"
say "serving; POST /v1/guests gives a guest's token"

# --- Schemathesis's settings for this run -------------------------------------------------------------------------
# Every request carries a guest's bearer token, fetched from POST /v1/guests; a 401 (DELETE /v1/sessions signed it
# out) fetches a new guest and sends the request again.
cat >"$work/schemathesis.toml" <<EOF
hooks = "$work/fuzz_hooks.py"

[auth.dynamic.openapi.bearer]
path = "/v1/guests"
method = "post"
extract_from = "body"
extract_selector = "/token"
EOF

# Positive cases that a JSON Schema cannot keep within the server's rules, because each rule ties two values
# together, are moved within them just before they are sent: a passage's last ayah after its first; a date or Hijri
# year that the chosen calendar covers (with the adjustment's two days to spare; the predicted calendar, the default,
# covers 1300-1500 AH, the default region's from 1882-11-13 to 2077-11-17); a map's day that the month has, in the
# years maps are drawn for; a device change that keeps the device's platform and gives a token of its form; a Web
# Push endpoint on a push service the server sends to (push.example.org, this run's web_push_hosts: the document
# cannot name the hosts an installation adds). Negative cases are sent as drawn.
cat >"$work/fuzz_hooks.py" <<'EOF'
import re
import secrets
from urllib.parse import unquote

import schemathesis

PASSAGE = re.compile(r"^([0-9]+):([0-9]+)-([0-9]+)$")
DATE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")
MAP = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})\.svg$")
APNS = re.compile(r"^([0-9A-Fa-f]{2}){32,100}$")
PLATFORMS = {}  # device id -> platform, from the server's answers
PUSH_HOST = "push.example.org"  # the run's web_push_hosts


def leap(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def month_length(year, month):
    return [31, 29 if leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]


def positive(case):
    return case.meta is not None and case.meta.generation.mode.is_positive


def on_a_push_service(body):
    """A Web Push token's endpoint moved onto PUSH_HOST, its port and path kept (within the 2048 characters)."""
    token = body.get("token") if isinstance(body, dict) else None
    endpoint = token.get("endpoint") if isinstance(token, dict) else None
    if not isinstance(endpoint, str) or not endpoint.startswith("https://"):
        return
    rest = endpoint[len("https://"):]
    cut = rest.find("/")
    authority, path = (rest, "") if cut < 0 else (rest[:cut], rest[cut:])
    port = authority.rsplit(":", 1)[1] if ":" in authority else None
    moved = ("https://" + PUSH_HOST + (":" + port if port else "") + path)[:2048]
    # Not ending inside a percent escape the cut made.
    token["endpoint"] = re.sub(r"%[0-9A-Fa-f]?$", "", moved)


@schemathesis.hook
def before_call(context, case, kwargs):
    if not positive(case):
        return
    path = case.operation.path
    parameters = case.path_parameters if isinstance(case.path_parameters, dict) else {}
    query = case.query if isinstance(case.query, dict) else {}
    tabular = query.get("calendar") == "tabular"
    predicted = query.get("calendar") in (None, "predicted")
    # Every route that takes a verse key, whatever else its path holds (the spec's verseKey parameter is the only
    # {key}): /v1/verses/{key}/commentary/{layer} once got no such care and failed on 7:760-090.
    if "{key}" in path:
        # Path parameters arrive here percent-encoded; digits and a colon need no encoding, and Schemathesis
        # checks the value written back against the schema as it is.
        match = PASSAGE.match(unquote(str(parameters.get("key", ""))))
        if match and int(match.group(3)) <= int(match.group(2)):
            parameters["key"] = f"{match.group(1)}:{match.group(2)}"
    elif path == "/v1/today":
        match = DATE.match(str(query.get("date", "")))
        if match:
            year, month, day = (int(part) for part in match.groups())
            low, high = ((622, 7, 21), (9999, 12, 29)) if tabular else ((1882, 11, 15), (2077, 11, 15)) if predicted else ((1882, 11, 14), (2174, 11, 23))
            if not low <= (year, month, day) <= high:
                year = 623 + year % 9376 if tabular else 1883 + year % 194 if predicted else 1883 + year % 291
                if (month, day) == (2, 29) and not leap(year):
                    day = 28
                query["date"] = f"{year:04d}-{month:02d}-{day:02d}"
    elif path == "/v1/calendar/{year}":
        year = unquote(str(parameters.get("year", "")))
        if year.isdigit():
            year = int(year)
            if tabular and year > 9665:
                parameters["year"] = 9665
            elif predicted and not 1300 <= year <= 1500:
                parameters["year"] = 1300 + year % 201
            elif not tabular and not predicted and not 1300 <= year <= 1600:
                parameters["year"] = 1300 + year % 301
    elif path == "/v1/crescent/{file}":
        match = MAP.match(unquote(str(parameters.get("file", ""))))
        if match:
            year, month, day = (int(part) for part in match.groups())
            if not 1900 <= year <= 2100:
                year = 1900 + year % 201
            parameters["file"] = f"{year:04d}-{month:02d}-{min(day, month_length(year, month)):02d}.svg"
    elif path == "/v1/devices" and case.method.upper() == "POST":
        on_a_push_service(case.body)
    elif path == "/v1/devices/{id}" and case.method.upper() == "PATCH" and isinstance(case.body, dict):
        on_a_push_service(case.body)
        platform = PLATFORMS.get(unquote(str(parameters.get("id", ""))))
        if platform is None:
            return
        if case.body.get("platform") is not None:
            case.body["platform"] = platform
        token = case.body.get("token")
        if token is None:
            return
        if platform == "webpush":
            fits = isinstance(token, dict)
        else:
            fits = isinstance(token, str) and (platform == "fcm" or APNS.match(token) is not None)
        if not fits:
            case.body["token"] = {
                "apns": secrets.token_hex(32),
                "fcm": "fcm-" + secrets.token_hex(16),
                "webpush": {"endpoint": "https://push.example.org/" + secrets.token_hex(8), "p256dh": "BA" + "A" * 85, "auth": "A" * 22},
            }[platform]


@schemathesis.hook
def after_call(context, case, response):
    if not case.operation.path.startswith("/v1/devices") or not 200 <= response.status_code < 300:
        return
    try:
        body = response.json()
    except Exception:
        return
    devices = body.get("devices") or ([body["device"]] if isinstance(body.get("device"), dict) else [])
    for device in devices:
        if isinstance(device, dict) and "id" in device and "platform" in device:
            PLATFORMS[device["id"]] = device["platform"]
EOF

# --- The run ------------------------------------------------------------------------------------------------------
command=("$schemathesis" --config-file "$work/schemathesis.toml" run "$spec" --url "$base" --checks all
    --max-examples "$examples" --seed "$seed" --workers "$workers" --request-timeout 20 --generation-database none
    --report junit,ndjson --report-dir "$work/report" --report-junit-path "$work/report/junit.xml")
say "running: ${command[*]}"
set +e
# From the run's folder, where Schemathesis keeps its cache of failures (.schemathesis/): each run starts afresh.
(cd "$work" && "${command[@]}") 2>&1 | tee "$work/schemathesis.log"
fuzz_status=${PIPESTATUS[0]}
set -e

# --- What the server said, and the summary --------------------------------------------------------------------------
alive=yes
kill -0 "$server_pid" 2>/dev/null || alive=no
internal=$(grep -c 'unexpected error' "$work/server.log" || true)
status=$fuzz_status
[ "$alive" = yes ] || status=1
[ "$internal" -eq 0 ] || status=1

# Per operation (and the stateful scenarios as one more), from the JUnit report: "N passed, M failed".
tally=$(py "$work/report/junit.xml" <<'EOF' 2>/dev/null || echo "0 0 -"
import sys
import xml.etree.ElementTree as ET
cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
failed = [case.get("name") for case in cases if case.find("failure") is not None or case.find("error") is not None]
print(len(cases) - len(failed), len(failed), "; ".join(failed) or "-")
EOF
)
read -r passed failed failed_names <<<"$tally"
[ $((passed + failed)) -gt 0 ] || status=1

echo
echo "api-fuzz summary"
echo "  schemathesis   $("$schemathesis" --version | sed 's/.*version //'), seed $seed, $examples examples per operation, $workers worker(s)"
echo "  result         $(grep -E '^=+ .* in [0-9.]+s =+$' "$work/schemathesis.log" | tail -n 1 | tr -d '=' | sed 's/^ *//; s/ *$//')"
echo "  failing        $failed_names"
echo "  exit status    $fuzz_status (0: no failure)"
echo "  server         $([ "$alive" = yes ] && echo "still serving" || echo "DIED during the run")"
echo "  5xx logged     $internal"
echo "  time           $((SECONDS - started)) s in all"
echo "  reproduce      FUZZ_SEED=$seed FUZZ_EXAMPLES=$examples scripts/api-fuzz.sh BINARY"
if [ "$alive" = no ]; then echo "--- the end of server.log"; tail -n 40 "$work/server.log"; fi
if [ "$internal" -ne 0 ]; then echo "--- the server's unexpected errors"; grep 'unexpected error' "$work/server.log" | head -n 20; fi
[ "$status" -eq 0 ] && echo "api-fuzz: passed" || echo "api-fuzz: FAILED"
echo "api-fuzz: $passed passed, $failed failed"
exit "$status"
