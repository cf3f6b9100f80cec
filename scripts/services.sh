#!/usr/bin/env bash
# services.sh — installs (when missing) and starts the ClickHouse and Redis that kwhouse needs,
# on loopback, with their data under .run/. Safe to run again: a server already answering is reused.
#
#   scripts/services.sh up     install if needed, start, wait until both answer
#   scripts/services.sh down   stop the servers this script started
#   scripts/services.sh env    print the KWHOUSE_* variables that point at them
#   scripts/services.sh browser  install Debian's chromium if missing (the dashboard's browser test)
#   scripts/services.sh toolchain  install npm and a C compiler if missing (fetching and linking chDB)
#
# Ports: KWHOUSE_CH_PORT (default 9000), KWHOUSE_REDIS_PORT (default 6379).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
run="$root/.run"
ch_port=${KWHOUSE_CH_PORT:-9000}
ch_http_port=${KWHOUSE_CH_HTTP_PORT:-8123}
redis_port=${KWHOUSE_REDIS_PORT:-6379}

log() { printf '[services] %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

apt_install() {
  local pkgs=("$@")
  if [ "$(id -u)" -ne 0 ]; then
    log "need root to install ${pkgs[*]}: run 'sudo apt-get install -y ${pkgs[*]}' and try again"
    exit 1
  fi
  log "installing ${pkgs[*]} from Debian (about a minute)"
  # Everything apt prints goes to stderr: this runs inside $(clickhouse_cmd), whose
  # stdout must be only the command.
  if [ ! -f "$run/.apt-updated" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    mkdir -p "$run" && touch "$run/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >&2
}

# clickhouse_cmd prints the command that starts a ClickHouse server: Debian's clickhouse-server,
# or a single 'clickhouse' binary already on PATH.
clickhouse_cmd() {
  if command -v clickhouse-server >/dev/null 2>&1; then echo "clickhouse-server"; return; fi
  if command -v clickhouse >/dev/null 2>&1; then echo "clickhouse server"; return; fi
  apt_install clickhouse-server clickhouse-client
  echo "clickhouse-server"
}

write_clickhouse_config() {
  local dir="$run/clickhouse"
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$dir/log"
  cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$dir/log/server.log</log>
        <errorlog>$dir/log/error.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$ch_port</tcp_port>
    <http_port>$ch_http_port</http_port>
    <max_connections>512</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>200</max_concurrent_queries>
    <uncompressed_cache_size>1073741824</uncompressed_cache_size>
    <mark_cache_size>1073741824</mark_cache_size>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
</yandex>
XML
  cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>8000000000</max_memory_usage>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
        <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
    </interval></default></quotas>
</yandex>
XML
}

wait_port() {
  local name=$1 port=$2 tries=${3:-120}
  for _ in $(seq "$tries"); do
    if port_open "$port"; then return 0; fi
    sleep 0.5
  done
  log "$name did not open port $port; see $run/$name/"
  return 1
}

clickhouse_up() {
  if port_open "$ch_port"; then log "ClickHouse already answers on 127.0.0.1:$ch_port"; return; fi
  local cmd; cmd=$(clickhouse_cmd)
  write_clickhouse_config
  log "starting ClickHouse ($cmd) on 127.0.0.1:$ch_port, data in .run/clickhouse"
  # shellcheck disable=SC2086
  nohup $cmd --config-file="$run/clickhouse/config.xml" >"$run/clickhouse/log/stdout.log" 2>&1 &
  echo $! >"$run/clickhouse/pid"
  wait_port clickhouse "$ch_port"
}

redis_up() {
  if port_open "$redis_port"; then log "Redis already answers on 127.0.0.1:$redis_port"; return; fi
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  mkdir -p "$run/redis"
  log "starting Redis on 127.0.0.1:$redis_port (a cache: no persistence)"
  redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$run/redis" --save '' --appendonly no \
    --daemonize yes --pidfile "$run/redis/pid" --logfile "$run/redis/redis.log"
  wait_port redis "$redis_port"
}

docker_engine() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }

up() {
  mkdir -p "$run"
  if [ "${KWHOUSE_USE_DOCKER:-auto}" != "no" ] && docker_engine && ! port_open "$ch_port"; then
    log "Docker engine found: starting ClickHouse and Redis with docker compose"
    docker compose -f "$root/docker-compose.yml" up -d clickhouse redis
    wait_port clickhouse "$ch_port"; wait_port redis "$redis_port"
    return
  fi
  clickhouse_up
  redis_up
}

down() {
  for name in clickhouse redis; do
    local pidfile="$run/$name/pid"
    if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      log "stopping $name"
      kill "$(cat "$pidfile")" || true
    fi
    rm -f "$pidfile"
  done
}

# browser installs the headless browser the dashboard test drives (dashboard/browser_test.go).
browser() {
  if command -v chromium >/dev/null 2>&1 || [ -n "${KWHOUSE_TEST_CHROMIUM:-}" ]; then return; fi
  apt_install chromium
}

# toolchain installs what an embedded build needs: npm fetches chDB (scripts/chdb.sh), cgo
# links it.
toolchain() {
  local need=()
  command -v npm >/dev/null 2>&1 || need+=(npm)
  command -v gcc >/dev/null 2>&1 || need+=(gcc)
  [ "${#need[@]}" -eq 0 ] || apt_install "${need[@]}"
}

env_vars() {
  echo "export KWHOUSE_CLICKHOUSE_ADDR=127.0.0.1:$ch_port"
  echo "export KWHOUSE_REDIS_ADDR=127.0.0.1:$redis_port"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  env) env_vars ;;
  browser) browser ;;
  toolchain) toolchain ;;
  *) echo "usage: $0 up|down|env|browser|toolchain" >&2; exit 2 ;;
esac
