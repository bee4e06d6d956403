#!/usr/bin/env bash
# Run KRaft Apache Kafka 4.x on 127.0.0.1 for local development (no Docker): one node by
# default, or a cluster of KAFKA_NODES nodes.
#
#   ops/kafka/run-local.sh start    # fetch jars if missing, format, start, wait, print bootstrap
#   ops/kafka/run-local.sh status   # exit 0 and print bootstrap if running, exit 3 if not
#   ops/kafka/run-local.sh stop     # SIGTERM (SIGKILL after 20 s), delete the temp log dirs
#
#   KAFKA_NODES=3 ops/kafka/run-local.sh start
#       # KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>
#
# A cluster (KAFKA_NODES > 1) has every node a broker and a controller
# (process.roles=broker,controller): the controller quorum is all nodes, so three nodes keep a
# metadata leader with any one of them down. Each node has its own temp dir (config, data/,
# kafka.log) and ports. The offsets, transaction-state and share-coordinator topics get
# min(3, nodes) replicas and a min ISR one less (at least 1), as Kafka's defaults on a cluster;
# default.replication.factor and min.insync.replicas stay 1, so a topic is as safe as its
# creator asks (`learnstream topics create` asks min(3, brokers) and one less). start returns
# once every node is ready and every node's metadata lists all of them. stop and status act on
# the nodes the state dir records, whatever KAFKA_NODES says. Each node is a JVM of up to
# 512 MB heap; start refuses while another node count runs from the same state dir.
#
# Environment:
#   KAFKA_NODES                  number of nodes, 1 to 9 (default 1)
#   KAFKA_PORT                   PLAINTEXT port of node 1; node i gets KAFKA_PORT + i - 1
#                                (default: free ports)
#   KAFKA_CONTROLLER_PORT        CONTROLLER port of node 1; node i gets it + i - 1 (default:
#                                free ports; one taken by a PLAINTEXT port is replaced)
#   LEARNSTREAM_KAFKA_VERSION    Kafka version (default 4.3.1)
#   LEARNSTREAM_KAFKA_HOME       dir whose libs/ holds the jars
#                                (default ~/.cache/learnstream/kafka/<version>)
#   LEARNSTREAM_KAFKA_STATE_DIR  pid/port state (default ~/.cache/learnstream/kafka/run): node 1's
#                                in pid, port, workdir; node i's in pid.<i>, port.<i>, workdir.<i>;
#                                the node count in nodes
#   KAFKA_START_TIMEOUT          seconds to wait for readiness of all nodes (default 120)
#
# status exits 0 when every node runs, 3 when none does, 4 when only some do (a cluster).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOST=127.0.0.1
VERSION="${LEARNSTREAM_KAFKA_VERSION:-4.3.1}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/learnstream/kafka"
KAFKA_HOME_DIR="${LEARNSTREAM_KAFKA_HOME:-$CACHE/$VERSION}"
LIBS="$KAFKA_HOME_DIR/libs"
STATE_DIR="${LEARNSTREAM_KAFKA_STATE_DIR:-$CACHE/run}"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
STOP_GRACE=20
NODES="${KAFKA_NODES:-1}"
MAX_NODES=9

log() { printf 'run-local: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# Print the path of a node's state file; node 1 keeps the names a single node has always used,
# so a broker started by an older copy of this script can still be stopped.
state_file() {
  local name="$1" node="${2:-1}"
  if ((node == 1)); then echo "$STATE_DIR/$name"; else echo "$STATE_DIR/$name.$node"; fi
}

state() {
  local file
  file="$(state_file "$1" "${2:-1}")"
  [[ -f "$file" ]] && cat "$file" || true
}

# Print how many nodes the state dir records (1 when it records none).
recorded_nodes() {
  local nodes
  nodes="$(state nodes)"
  [[ "$nodes" =~ ^[1-9]$ ]] && echo "$nodes" || echo 1
}

# Print "node <i> " for a node of a cluster, nothing for a single node.
label() { ((NODES > 1)) && echo "node $1 " || true; }

# Print the pid of a node if that process is our Kafka broker, started on this node's work dir,
# and still alive (a pid reused by another broker on the machine is not ours).
running_pid() {
  local node="${1:-1}" pid work cmdline
  pid="$(state pid "$node")"
  work="$(state workdir "$node")"
  [[ -n "$pid" && -n "$work" ]] && kill -0 "$pid" 2>/dev/null || return 1
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ "$cmdline" == *kafka.Kafka*"$work/server.properties"* ]] || return 1
  echo "$pid"
}

# Print "127.0.0.1:<port>" of the given nodes (default: all $NODES), comma-separated.
bootstrap() {
  local node list=() nodes=("$@")
  ((${#nodes[@]})) || mapfile -t nodes < <(seq "$NODES")
  for node in "${nodes[@]}"; do list+=("$HOST:$(state port "$node")"); done
  (IFS=,; echo "${list[*]}")
}

have_jars() { compgen -G "$LIBS/kafka_2.13-*.jar" >/dev/null; }

# Copy the broker's runtime jars from Maven Central into $LIBS once (atomic, locked).
fetch_jars() {
  have_jars && return 0
  command -v mvn >/dev/null || die "mvn not found: Maven is needed to fetch the Kafka jars"
  mkdir -p "$KAFKA_HOME_DIR"
  exec 9>"$KAFKA_HOME_DIR/.fetch.lock"
  flock 9
  if ! have_jars; then
    local staging
    staging="$(mktemp -d "$KAFKA_HOME_DIR/libs.partial-XXXXXX")"
    log "fetching Apache Kafka $VERSION jars with Maven into $LIBS"
    if ! mvn -q -B -Dstyle.color=never -f "$HERE/pom.xml" dependency:copy-dependencies \
        -DoutputDirectory="$staging" -DincludeScope=runtime -Dkafka.version="$VERSION" >&2; then
      rm -rf "$staging"
      die "Maven could not fetch Apache Kafka $VERSION"
    fi
    rm -rf "$LIBS"
    mv "$staging" "$LIBS"
  fi
  flock -u 9
}

# Print a TCP port on 127.0.0.1 that is free right now.
free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    return
  fi
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/$HOST/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

# Print a free port that is not in the space-separated list $1.
unused_port() {
  local port
  port="$(free_port)"
  while [[ " $1 " == *" $port "* ]]; do port="$(free_port)"; done
  echo "$port"
}

# Print port $1 + offset $2, or die naming the variable $3 it came from if it is no port.
port_from() {
  [[ "$1" =~ ^[0-9]{1,5}$ ]] || die "$3 must be a port number, got '$1'"
  local port=$((10#$1 + $2))
  ((port >= 1 && port <= 65535)) || die "$3=$1 gives node $(($2 + 1)) port $port, not a valid port"
  echo "$port"
}

# Fill PORTS and CPORTS, indexed by node id, with distinct PLAINTEXT and CONTROLLER ports.
pick_ports() {
  local node port used=""
  PORTS=() CPORTS=()
  for ((node = 1; node <= NODES; node++)); do
    if [[ -n "${KAFKA_PORT:-}" ]]; then
      port="$(port_from "$KAFKA_PORT" $((node - 1)) KAFKA_PORT)"
    else
      port="$(unused_port "$used")"
    fi
    PORTS[node]="$port"
    used+=" $port"
  done
  for ((node = 1; node <= NODES; node++)); do
    port=""
    [[ -n "${KAFKA_CONTROLLER_PORT:-}" ]] \
      && port="$(port_from "$KAFKA_CONTROLLER_PORT" $((node - 1)) KAFKA_CONTROLLER_PORT)"
    [[ -z "$port" || " $used " == *" $port "* ]] && port="$(unused_port "$used")"
    CPORTS[node]="$port"
    used+=" $port"
  done
}

# Print a KRaft cluster id: a base64url UUID like `kafka-storage random-uuid`, never starting
# with "-" (the CLI would take it for an option).
new_cluster_id() {
  local cluster_id="-"
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
  done
  echo "$cluster_id"
}

# Tell whether the broker answers a raw ApiVersions v0 request with error code 0.
api_versions_ok() {
  local port="$1" reply
  reply="$(
    exec 3<>"/dev/tcp/$HOST/$port" || exit 1
    # size=15 | api_key=18 api_version=0 correlation_id=1 client_id="probe"
    printf '\x00\x00\x00\x0f\x00\x12\x00\x00\x00\x00\x00\x01\x00\x05probe' >&3
    timeout 3 head -c 10 <&3 | od -An -tx1 | tr -d ' \n'
  )" 2>/dev/null || return 1
  [[ "${reply:8:12}" == "000000010000" ]]
}

# Print how many live brokers the node on port $1 lists in its metadata (a raw Metadata v4
# request for no topics; v4 is still served by Kafka 4); fail if it does not answer.
metadata_brokers() {
  local port="$1" reply
  reply="$(
    exec 3<>"/dev/tcp/$HOST/$port" || exit 1
    # size=20 | api_key=3 api_version=4 correlation_id=1 client_id="probe" topics=[] auto=false
    printf '\x00\x00\x00\x14\x00\x03\x00\x04\x00\x00\x00\x01\x00\x05probe\x00\x00\x00\x00\x00' >&3
    # size, correlation_id, throttle_time_ms, then the brokers array's length
    timeout 3 head -c 16 <&3 | od -An -tx1 | tr -d ' \n'
  )" 2>/dev/null || return 1
  [[ "${#reply}" == 32 && "${reply:8:8}" == "00000001" ]] || return 1
  echo $((16#${reply:24:8}))
}

write_configs() {
  local work="$1" node="$2" port="$3" cport="$4" voters="$5"
  local replicas=$((NODES < 3 ? NODES : 3))
  local min_isr=$((replicas > 1 ? replicas - 1 : 1))
  cat >"$work/server.properties" <<EOF
process.roles=broker,controller
node.id=$node
controller.quorum.voters=$voters
listeners=PLAINTEXT://$HOST:$port,CONTROLLER://$HOST:$cport
advertised.listeners=PLAINTEXT://$HOST:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$work/data
num.partitions=4
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=$replicas
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$replicas
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=$replicas
share.coordinator.state.topic.min.isr=$min_isr
share.coordinator.state.topic.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=4000
num.network.threads=2
num.io.threads=4
EOF
  cat >"$work/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = ${sys:learnstream.kafka.loglevel:-INFO}
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
EOF
}

java_cmd() {
  local work="$1" level="$2"
  # shellcheck disable=SC2206  # LEARNSTREAM_KAFKA_JAVA_OPTS is a word list on purpose
  JAVA_ARGS=("${JAVA:-java}" -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true ${LEARNSTREAM_KAFKA_JAVA_OPTS:-}
    "-Dlog4j2.configurationFile=$work/log4j2.properties" "-Dlearnstream.kafka.loglevel=$level"
    "-Dkafka.logs.dir=$work" -cp "$LIBS/*")
}

# Format every node's storage with one cluster id, in parallel; die on the first failure.
format_storage() {
  local node work cluster_id failed=0
  local -a jobs=()
  cluster_id="$(new_cluster_id)"
  for ((node = 1; node <= NODES; node++)); do
    work="$(state workdir "$node")"
    java_cmd "$work" WARN
    "${JAVA_ARGS[@]}" kafka.tools.StorageTool format -t "$cluster_id" \
      -c "$work/server.properties" >>"$work/kafka.log" 2>&1 &
    jobs[node]=$!
  done
  for ((node = 1; node <= NODES; node++)); do
    wait "${jobs[node]}" || { ((failed)) || failed="$node"; }
  done
  ((failed)) || return 0
  tail -n 40 "$(state workdir "$failed")/kafka.log" >&2
  cleanup_all
  die "storage format failed$( ((NODES == 1)) || echo " for node $failed")"
}

launch() {
  local node="$1" work pid
  work="$(state workdir "$node")"
  java_cmd "$work" INFO
  (cd "$work" && exec nohup "${JAVA_ARGS[@]}" kafka.Kafka "$work/server.properties" \
    >>"$work/kafka.log" 2>&1 </dev/null) &
  pid=$!
  echo "$pid" >"$(state_file pid "$node")"
  if ((NODES == 1)); then
    log "started pid $pid, logs in $work/kafka.log; waiting for readiness"
  else
    log "started node $node pid $pid, logs in $work/kafka.log"
  fi
}

# Stop everything with the last lines of a node's log when a node died or time ran out.
start_failed() {
  local node="$1"
  tail -n 40 "$(state workdir "$node")/kafka.log" >&2
  cmd_stop >/dev/null 2>&1 || true
  ((NODES == 1)) && die "Apache Kafka did not become ready"
  die "Apache Kafka node $node of $NODES did not become ready"
}

# Fail the start if any node exited, or, blaming node $2, if the deadline $1 has passed.
check_progress() {
  local deadline="$1" waiting="$2" node
  for ((node = 1; node <= NODES; node++)); do
    kill -0 "$(state pid "$node")" 2>/dev/null || start_failed "$node"
  done
  ((SECONDS < deadline)) || start_failed "$waiting"
}

node_started() {
  grep -q 'Kafka Server started' "$(state workdir "$1")/kafka.log" \
    && api_versions_ok "$(state port "$1")"
}

# Tell whether the metadata of node $1 lists every node as a live broker.
node_sees_all() { [[ "$(metadata_brokers "$(state port "$1")")" == "$NODES" ]]; }

# Wait until each node has started and, for a cluster, each one's metadata lists all nodes:
# a node starts once a majority of the quorum runs, so every node is launched first.
wait_ready() {
  local deadline=$((SECONDS + START_TIMEOUT)) node
  for ((node = 1; node <= NODES; node++)); do
    until node_started "$node"; do
      check_progress "$deadline" "$node"
      sleep 0.5
    done
  done
  ((NODES > 1)) || return 0
  for ((node = 1; node <= NODES; node++)); do
    until node_sees_all "$node"; do
      check_progress "$deadline" "$node"
      sleep 0.5
    done
  done
}

cmd_start() {
  [[ "$NODES" =~ ^[1-9]$ ]] \
    || die "KAFKA_NODES must be a number from 1 to $MAX_NODES, got '$NODES'"
  local recorded node pid pids=() up=0
  recorded="$(recorded_nodes)"
  for ((node = 1; node <= recorded; node++)); do
    pid="$(running_pid "$node")" && { pids+=("$pid"); up=$((up + 1)); }
  done
  if ((up > 0 && up < recorded)); then
    die "$up of $recorded nodes are running (state in $STATE_DIR): run '$0 stop' first"
  fi
  if ((up > 0 && recorded != NODES)); then
    die "a $recorded-node Kafka is already running (state in $STATE_DIR):" \
      "run '$0 stop' before starting $NODES"
  fi
  if ((up > 0)); then
    if ((NODES == 1)); then
      log "already running (pid ${pids[0]})"
    else
      log "already running (pids ${pids[*]})"
    fi
    echo "KAFKA_BOOTSTRAP_SERVERS=$(bootstrap)"
    return 0
  fi
  cleanup_all
  fetch_jars
  pick_ports
  local voters=() work
  for ((node = 1; node <= NODES; node++)); do voters+=("$node@$HOST:${CPORTS[node]}"); done
  mkdir -p "$STATE_DIR"
  echo "$NODES" >"$STATE_DIR/nodes"
  for ((node = 1; node <= NODES; node++)); do
    work="$(mktemp -d "${TMPDIR:-/tmp}/learnstream-kafka-XXXXXX")"
    echo "$work" >"$(state_file workdir "$node")"
    echo "${PORTS[node]}" >"$(state_file port "$node")"
    write_configs "$work" "$node" "${PORTS[node]}" "${CPORTS[node]}" "$(IFS=,; echo "${voters[*]}")"
  done
  format_storage
  for ((node = 1; node <= NODES; node++)); do launch "$node"; done
  ((NODES == 1)) || log "waiting for readiness of $NODES nodes"
  wait_ready
  local servers
  servers="$(bootstrap)"
  if ((NODES == 1)); then
    log "ready: Apache Kafka $VERSION on $servers"
  else
    log "ready: Apache Kafka $VERSION, $NODES nodes on $servers"
  fi
  echo "KAFKA_BOOTSTRAP_SERVERS=$servers"
}

# Remove the temp log dir and state files of a node that is not running.
cleanup_state() {
  local node="$1" work
  work="$(state workdir "$node")"
  [[ -n "$work" && -d "$work" && "$work" == *learnstream-kafka-* ]] && rm -rf "$work"
  rm -f "$(state_file pid "$node")" "$(state_file port "$node")" "$(state_file workdir "$node")"
}

# Clean every node slot, not just the recorded count, so no stale file outlives a stop.
cleanup_all() {
  local node
  for ((node = 1; node <= MAX_NODES; node++)); do cleanup_state "$node"; done
  rm -f "$STATE_DIR/nodes"
}

# SIGTERM every running node at once, so a cluster's stop waits one grace period at most, not
# one per node; SIGKILL whatever is left after it, then clean the state.
cmd_stop() {
  local recorded node pid waited=0 alive=1
  local -a pids=()
  recorded="$(recorded_nodes)"
  NODES="$recorded"
  for ((node = 1; node <= recorded; node++)); do
    pid="$(running_pid "$node")" && kill -TERM "$pid" && pids[node]="$pid"
  done
  while ((alive && waited < STOP_GRACE * 10)); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
    waited=$((waited + 1))
  done
  for node in "${!pids[@]}"; do
    pid="${pids[node]}"
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    log "stopped $(label "$node")pid $pid"
  done
  ((${#pids[@]})) || log "not running"
  cleanup_all
}

cmd_status() {
  local recorded node pid prefix up=0
  recorded="$(recorded_nodes)"
  NODES="$recorded"
  local -a live=()
  for ((node = 1; node <= recorded; node++)); do
    if pid="$(running_pid "$node")"; then
      up=$((up + 1))
      live+=("$node")
      ((recorded == 1)) && prefix="" || prefix="node=$node "
      echo "running ${prefix}pid=$pid logs=$(state workdir "$node")/kafka.log"
    elif ((recorded > 1)); then
      echo "stopped node=$node"
    fi
  done
  if ((up == 0)); then
    echo "stopped"
    return 3
  fi
  echo "KAFKA_BOOTSTRAP_SERVERS=$(bootstrap "${live[@]}")"
  ((up == recorded)) || return 4
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
