#!/usr/bin/env bash
# chdb.sh VERSION — fetches chDB (ClickHouse as a shared library) from the npm registry
# into .cache/chdb/VERSION once, and prints that folder. Reused when already there.
set -euo pipefail

version=${1:?usage: scripts/chdb.sh VERSION}
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.cache/chdb/$version"
log() { printf '[chdb] %s\n' "$*" >&2; }

if [ -f "$dir/libchdb.so" ]; then
  echo "$dir"
  exit 0
fi
command -v npm >/dev/null || { log "npm is needed to fetch chDB (apt-get install -y npm)"; exit 1; }
mkdir -p "$root/.cache"
tmp=$(mktemp -d "$root/.cache/chdb-fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "fetching @chdb/lib-linux-x64-gnu@$version from the npm registry (about 180 MB, once)"
(cd "$tmp" && npm pack --silent "@chdb/lib-linux-x64-gnu@$version" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp"
mkdir -p "$dir"
mv "$tmp/package/libchdb.so" "$dir/libchdb.so.part" && mv "$dir/libchdb.so.part" "$dir/libchdb.so"
log "chDB $version in $dir"
echo "$dir"
