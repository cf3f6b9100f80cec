#!/usr/bin/env bash
# run.sh — what `make run` and `make run-servers` do after the build: make a JWT secret and
# a demo account on first use (kept in .run/), load the demo fleet into it (`kwhouse demo`,
# from ../shared/data or KWHOUSE_DEMO_DATA; skipped when the files are absent), print how
# to call the API and open the dashboard, then serve on :8080.
#
# Mode: KWHOUSE_RUN_MODE=embedded (ClickHouse and Redis inside kwhouse, data in
# KWHOUSE_EMBEDDED_DIR, default .run/embedded) or servers (KWHOUSE_CLICKHOUSE_ADDR and
# KWHOUSE_REDIS_ADDR, default the loopback servers of `make services`). Unset: servers
# when either address is set in the environment, embedded otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run="$root/.run"
bin="$root/bin/kwhouse"
mkdir -p "$run"

if [ -z "${KWHOUSE_AUTH_JWT_SECRET:-}" ]; then
  [ -f "$run/jwt_secret" ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$run/jwt_secret"
  KWHOUSE_AUTH_JWT_SECRET=$(cat "$run/jwt_secret")
  export KWHOUSE_AUTH_JWT_SECRET
fi
mode=${KWHOUSE_RUN_MODE:-}
if [ -z "$mode" ]; then
  mode=embedded
  [ -z "${KWHOUSE_CLICKHOUSE_ADDR:-}${KWHOUSE_REDIS_ADDR:-}" ] || mode=servers
fi
case "$mode" in
  embedded)
    export KWHOUSE_EMBEDDED_DIR=${KWHOUSE_EMBEDDED_DIR:-$run/embedded}
    where="embedded: ClickHouse and Redis inside kwhouse, data in $KWHOUSE_EMBEDDED_DIR"
    demo="$run/demo-account.embedded.json" ;;
  servers)
    export KWHOUSE_CLICKHOUSE_ADDR=${KWHOUSE_CLICKHOUSE_ADDR:-127.0.0.1:${CH_PORT:-9000}}
    export KWHOUSE_REDIS_ADDR=${KWHOUSE_REDIS_ADDR:-127.0.0.1:${REDIS_PORT:-6379}}
    where="servers: ClickHouse at $KWHOUSE_CLICKHOUSE_ADDR, Redis at $KWHOUSE_REDIS_ADDR"
    demo="$run/demo-account.json" ;;
  *) echo "KWHOUSE_RUN_MODE must be embedded or servers, got $mode" >&2; exit 2 ;;
esac
export KWHOUSE_LOG_FORMAT=${KWHOUSE_LOG_FORMAT:-text}

field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$demo"; }
if [ ! -s "$demo" ] || ! "$bin" accounts list 2>/dev/null | grep -q "$(field account_id)"; then
  "$bin" accounts create --name demo --json >"$demo.tmp" && mv "$demo.tmp" "$demo"
fi
account=$(field account_id)
key=$(field test_key)
port=${KWHOUSE_HTTP_ADDR:-:8080}
port=${port##*:}
data=${KWHOUSE_DEMO_DATA:-$root/../shared/data}
dashboard=$("$bin" demo --key "$key" --data "$data" --dashboard "http://localhost:$port/dashboard") ||
  dashboard="http://localhost:$port/dashboard   (the demo fleet was not loaded: see above)"

cat <<TXT

  kwhouse ($where)
  demo account: $account
  test key:     $key      (also in ${demo#"$root"/})

  Try it:
    curl -s -H "Authorization: Bearer $key" -X POST http://localhost:$port/locations \\
         -d '{"reference_id":"home-1","postal_address":{"country_code":"GB"}}'
    curl -s -u $account:$key http://localhost:$port/login

  Dashboard (the key is in the link's fragment, never sent to the server):
    $dashboard

  API document: http://localhost:$port/openapi.json   Ctrl-C stops the service.

TXT
exec "$bin" serve
