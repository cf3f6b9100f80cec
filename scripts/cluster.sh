#!/usr/bin/env bash
# cluster.sh — a real ClickHouse cluster on this machine, from Debian packages only:
# one ZooKeeper and four clickhouse-server processes on loopback, cluster "kw" of
# 2 shards × 2 replicas. Each process has its own ports and data under .run/cluster/ and
# is stopped by its own PID.
#
#   scripts/cluster.sh up        install if needed, start, wait until every node answers
#   scripts/cluster.sh down      stop every process this script started
#   scripts/cluster.sh stop N    stop node N (1–4) only (a failure drill); start N starts it again
#   scripts/cluster.sh kill N    kill node N with SIGKILL (a crash)
#   scripts/cluster.sh env       print the KWHOUSE_* variables that point kwhouse at it
#
# Native ports: 9101 (shard 1 replica 1), 9102 (s1 r2), 9103 (s2 r1), 9104 (s2 r2);
# ZooKeeper 2191. KWHOUSE_CLUSTER_BASE moves the native ports (default 9100).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
run="$root/.run/cluster"
base=${KWHOUSE_CLUSTER_BASE:-9100}
zk_port=${KWHOUSE_ZK_PORT:-2191}
nodes=(1 2 3 4)

log() { printf '[cluster] %s\n' "$*" >&2; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    log "need root to install $*: run 'sudo apt-get install -y $*' and try again"
    exit 1
  fi
  log "installing $* from Debian (about a minute)"
  if [ ! -f "$root/.run/.apt-updated" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    mkdir -p "$root/.run" && touch "$root/.run/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

shard_of() { echo $(( ($1 + 1) / 2 )); }
replica_of() { echo $(( ($1 + 1) % 2 + 1 )); }
native_port() { echo $(( base + $1 )); }
http_port() { echo $(( base + 100 + $1 )); }
interserver_port() { echo $(( base + 200 + $1 )); }

remote_servers() {
  local s n
  for s in 1 2; do
    echo "        <shard><internal_replication>true</internal_replication>"
    for n in "${nodes[@]}"; do
      [ "$(shard_of "$n")" = "$s" ] || continue
      echo "            <replica><host>127.0.0.1</host><port>$(native_port "$n")</port></replica>"
    done
    echo "        </shard>"
  done
}

write_node_config() {
  local n=$1 dir="$run/ch$1"
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$dir/log"
  cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/error.log</errorlog><size>50M</size><count>2</count></logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$(native_port "$n")</tcp_port>
    <http_port>$(http_port "$n")</http_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <interserver_http_port>$(interserver_port "$n")</interserver_http_port>
    <max_connections>256</max_connections>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$run/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <remote_servers><kw>
$(remote_servers)
    </kw></remote_servers>
    <macros><shard>$(shard_of "$n")</shard><replica>s$(shard_of "$n")r$(replica_of "$n")</replica></macros>
    <zookeeper>
        <node><host>127.0.0.1</host><port>$zk_port</port></node>
        <!-- 18.16's 30 s default leaves a restarted replica read-only until the old session expires. -->
        <session_timeout_ms>5000</session_timeout_ms>
    </zookeeper>
    <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
</yandex>
XML
}

write_users() {
  mkdir -p "$run"
  cat >"$run/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <profiles><default><max_memory_usage>4000000000</max_memory_usage><load_balancing>in_order</load_balancing></default></profiles>
    <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
        <profile>default</profile><quota>default</quota></default></users>
    <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
        <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
    </interval></default></quotas>
</yandex>
XML
}

zk_server() {
  local d
  for d in /usr/share/zookeeper/bin /opt/zookeeper/bin; do
    [ -x "$d/zkServer.sh" ] && { echo "$d/zkServer.sh"; return; }
  done
  echo ""
}

zk_up() {
  if port_open "$zk_port"; then log "ZooKeeper already answers on 127.0.0.1:$zk_port"; return; fi
  command -v java >/dev/null 2>&1 && [ -d /usr/share/zookeeper ] || apt_install zookeeper
  local dir="$run/zk"
  mkdir -p "$dir/data" "$dir/conf"
  cat >"$dir/conf/zoo.cfg" <<CFG
tickTime=500
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$zk_port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat
maxClientCnxns=200
CFG
  log "starting ZooKeeper on 127.0.0.1:$zk_port"
  local cp
  cp=$(find /usr/share/java /usr/share/zookeeper -name '*.jar' 2>/dev/null | tr '\n' ':')
  nohup java -Xmx256m -cp "$cp" -Dzookeeper.log.dir="$dir" -Dlog4j.configuration=file:/etc/zookeeper/conf/log4j.properties \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/conf/zoo.cfg" >"$dir/stdout.log" 2>&1 &
  echo $! >"$dir/pid"
  # ruok answers before sessions are served: wait until srvr reports a mode.
  for _ in $(seq 120); do
    if port_open "$zk_port" && (exec 3<>"/dev/tcp/127.0.0.1/$zk_port"; printf srvr >&3; cat <&3) 2>/dev/null | grep -q '^Mode:'; then
      return 0
    fi
    sleep 0.5
  done
  log "ZooKeeper did not start; see $dir/stdout.log"
  return 1
}

node_up() {
  local n=$1 port
  port=$(native_port "$n")
  if port_open "$port"; then return; fi
  command -v clickhouse-server >/dev/null 2>&1 || apt_install clickhouse-server clickhouse-client
  write_node_config "$n"
  nohup clickhouse-server --config-file="$run/ch$n/config.xml" >"$run/ch$n/log/stdout.log" 2>&1 &
  echo $! >"$run/ch$n/pid"
}

wait_node() {
  local n=$1
  for _ in $(seq 120); do
    port_open "$(native_port "$n")" && return 0
    sleep 0.5
  done
  log "node $n did not open port $(native_port "$n"); see $run/ch$n/log/"
  return 1
}

# wait_replicas waits until node n's replicated tables have restarted replication: a node
# killed and started again within its ZooKeeper session (5 s) finds its old session's
# replicas "already active" and keeps its tables read-only until that session expires, and
# an insert on any node then fails ("Replica is not active right now"). A restarted node is
# up once it can take writes.
wait_replicas() {
  local n=$1 port
  port=$(native_port "$n")
  for _ in $(seq 180); do
    [ "$(clickhouse-client --port "$port" -q 'SELECT count() FROM system.replicas WHERE is_readonly OR is_session_expired' 2>/dev/null)" = 0 ] && return 0
    sleep 0.5
  done
  log "node $n still has read-only replicas after 90 s; see $run/ch$n/log/"
}

stop_pid() {
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# kill_node kills node N with SIGKILL and waits until it is gone: a start right after must
# not find the dying process's port still open and take the node for up.
kill_node() {
  local f="$run/ch$1/pid" pid
  pid=$(cat "$f")
  kill -9 "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  for _ in $(seq 100); do port_open "$(native_port "$1")" || break; sleep 0.1; done
  rm -f "$f"
}

up() {
  write_users
  zk_up
  local n
  for n in "${nodes[@]}"; do node_up "$n"; done
  for n in "${nodes[@]}"; do wait_node "$n"; done
  log "cluster kw: 2 shards × 2 replicas on 127.0.0.1:$(native_port 1)-$(native_port 4), ZooKeeper :$zk_port"
}

down() {
  local n
  for n in "${nodes[@]}"; do stop_pid "$run/ch$n/pid"; done
  stop_pid "$run/zk/pid"
  log "stopped"
}

addrs() {
  local n out=""
  for n in "${nodes[@]}"; do out+="${out:+,}127.0.0.1:$(native_port "$n")"; done
  echo "$out"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  stop) stop_pid "$run/ch${2:?node 1-4}/pid" ;;
  kill) kill_node "${2:?node 1-4}" ;;
  start) write_users; node_up "${2:?node 1-4}"; wait_node "$2"; wait_replicas "$2" ;;
  addrs) addrs ;;
  env) echo "KWHOUSE_CLICKHOUSE_CLUSTER=kw KWHOUSE_CLICKHOUSE_ADDR=$(addrs)" ;;
  *) echo "usage: $0 up|down|stop N|kill N|start N|addrs|env" >&2; exit 2 ;;
esac
