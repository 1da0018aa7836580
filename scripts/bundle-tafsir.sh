#!/usr/bin/env bash
# Writes data/tafsir/<edition>.jsonl: the app-furqan commentary editions' text for every verse a day can show.
#
#   scripts/bundle-tafsir.sh [DATASET]
#
# DATASET is a checkout of github.com/narmafraz/ThaqalaynTafsirData (cloned at the commit below when not given). The four
# English editions it takes from app-furqan/quran-app-data are CC BY-ND 4.0: shared verbatim, whole or in part, with
# credit. The script imports them into a scratch database, then `dailyverse content bundle-tafsir` writes, for each
# selection of the month pools and the occasions, the blocks that comment on its verses: whole when short, else the
# verbatim part its excerpts need. Run it after changing the pools, the occasions, the layers' sources or the way
# excerpts are cut, and commit what it writes. Nothing of the altafsir.com editions is ever bundled.
set -euo pipefail

COMMIT=1acb6d223fd22249dcef4dd31a0adb7f6e10115b
EDITIONS=(en.mizan en.safi en.noor en.nemooneh)
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

dataset=${1:-}
if [[ -z "$dataset" ]]; then
    dataset="$scratch/ThaqalaynTafsirData"
    git clone --quiet --filter=blob:none --no-checkout https://github.com/narmafraz/ThaqalaynTafsirData "$dataset"
    git -C "$dataset" sparse-checkout set --no-cone /editions.json /NOTICE.md "${EDITIONS[@]/#//}"
    git -C "$dataset" checkout --quiet "$COMMIT"
fi

swift build -c release --product dailyverse
bin="$here/.build/release/dailyverse"
args=()
for edition in "${EDITIONS[@]}"; do args+=(--edition "$edition"); done

# The bundle is written from the pools and occasions in data/, without the bundle being rewritten (a stale one could
# not be read by the new code), so the scratch database is seeded from a copy without it.
mkdir -p "$scratch/data"
cp -R "$here/data/." "$scratch/data/"
rm -rf "$scratch/data/tafsir"
export DAILYVERSE_DATA="$scratch/data" DAILYVERSE_DB="$scratch/bundle.sqlite"
"$bin" import tafsir "$dataset" "${args[@]}"
mkdir -p "$scratch/out"
"$bin" content bundle-tafsir "${args[@]}" --out "$scratch/out" \
    --taken-from "narmafraz/ThaqalaynTafsirData at commit $COMMIT, {edition}/{sura}.json (from app-furqan/quran-app-data)"
rm -rf "$here/data/tafsir"
mkdir -p "$here/data/tafsir"
cp "$scratch/out/"*.jsonl "$here/data/tafsir/"
echo "wrote $(ls "$here/data/tafsir" | wc -l) editions into data/tafsir/ ($(du -sh "$here/data/tafsir" | cut -f1))"
# The excerpts kept are cut from the whole editions; a read of the bundled parts must cut the same ones.
"$bin" content check --recut "$here/data"
