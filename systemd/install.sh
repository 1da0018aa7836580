#!/usr/bin/env bash
# Builds DailyVerse and installs the binary, data/, the systemd unit and an example configuration.
#   sudo systemd/install.sh              # into /usr/local, unit in /etc/systemd/system
#   PREFIX=/opt/dailyverse DESTDIR=/tmp/stage systemd/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}

swift build -c release --static-swift-stdlib --product dailyverse
install -D -m 0755 .build/release/dailyverse "$DESTDIR$PREFIX/bin/dailyverse"
rm -rf "$DESTDIR$PREFIX/share/dailyverse/data"
mkdir -p "$DESTDIR$PREFIX/share/dailyverse"
cp -R data "$DESTDIR$PREFIX/share/dailyverse/data"
install -D -m 0644 README.md "$DESTDIR$PREFIX/share/doc/dailyverse/README.md"
sed "s|/usr/local|$PREFIX|g" systemd/dailyverse.service > dailyverse.service.tmp
install -D -m 0644 dailyverse.service.tmp "$DESTDIR/etc/systemd/system/dailyverse.service"
rm -f dailyverse.service.tmp
# The push keys' folder: root's alone; the unit gets each key by LoadCredential= (README, Push services).
install -d -m 0700 "$DESTDIR/etc/dailyverse/keys"
if [ ! -e "$DESTDIR/etc/dailyverse/config.toml" ]; then
    # Its paths under the prefix, as the unit's: a `data` line uncommented as written must name the data installed.
    sed "s|/usr/local|$PREFIX|g" systemd/config.toml.example > config.toml.tmp
    install -D -m 0644 config.toml.tmp "$DESTDIR/etc/dailyverse/config.toml"
    rm -f config.toml.tmp
fi
echo "installed into ${DESTDIR:-/}: run 'systemctl daemon-reload && systemctl enable --now dailyverse'"
