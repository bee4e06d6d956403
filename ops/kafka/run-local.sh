#!/usr/bin/env bash
# Run a single-node KRaft Apache Kafka 4.x on 127.0.0.1 for local development (no Docker).
#
#   ops/kafka/run-local.sh start    # fetch jars if missing, format, start, wait, print bootstrap
#   ops/kafka/run-local.sh status   # exit 0 and print bootstrap if running, exit 3 if not
#   ops/kafka/run-local.sh stop     # SIGTERM (SIGKILL after 20 s), delete the temp log dir
#
# Environment:
#   KAFKA_PORT                   PLAINTEXT port (default: a free port)
#   KAFKA_CONTROLLER_PORT        CONTROLLER port (default: a free port)
#   LEARNSTREAM_KAFKA_VERSION    Kafka version (default 4.3.1)
#   LEARNSTREAM_KAFKA_HOME       dir whose libs/ holds the jars
#                                (default ~/.cache/learnstream/kafka/<version>)
#   LEARNSTREAM_KAFKA_STATE_DIR  pid/port state (default ~/.cache/learnstream/kafka/run)
#   KAFKA_START_TIMEOUT          seconds to wait for readiness (default 120)
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

log() { printf 'run-local: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

state() { [[ -f "$STATE_DIR/$1" ]] && cat "$STATE_DIR/$1" || true; }

# Print the pid from the state dir if that process is our Kafka broker and still alive.
running_pid() {
  local pid
  pid="$(state pid)"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka' || return 1
  echo "$pid"
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

write_configs() {
  local work="$1" port="$2" cport="$3"
  cat >"$work/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$cport
listeners=PLAINTEXT://$HOST:$port,CONTROLLER://$HOST:$cport
advertised.listeners=PLAINTEXT://$HOST:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$work/data
num.partitions=4
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
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

cmd_start() {
  local pid
  if pid="$(running_pid)"; then
    log "already running (pid $pid)"
    echo "KAFKA_BOOTSTRAP_SERVERS=$HOST:$(state port)"
    return 0
  fi
  cleanup_state
  fetch_jars
  local port="${KAFKA_PORT:-$(free_port)}" cport="${KAFKA_CONTROLLER_PORT:-}"
  while [[ -z "$cport" || "$cport" == "$port" ]]; do cport="$(free_port)"; done
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/learnstream-kafka-XXXXXX")"
  mkdir -p "$STATE_DIR"
  echo "$work" >"$STATE_DIR/workdir"
  echo "$port" >"$STATE_DIR/port"
  write_configs "$work" "$port" "$cport"

  local cluster_id
  # base64url UUID like `kafka-storage random-uuid`; never starting with "-" (a CLI option).
  cluster_id="-"
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
  done
  java_cmd "$work" WARN
  "${JAVA_ARGS[@]}" kafka.tools.StorageTool format -t "$cluster_id" \
    -c "$work/server.properties" >>"$work/kafka.log" 2>&1 \
    || { tail -n 40 "$work/kafka.log" >&2; cleanup_state; die "storage format failed"; }

  java_cmd "$work" INFO
  (cd "$work" && exec nohup "${JAVA_ARGS[@]}" kafka.Kafka "$work/server.properties" \
    >>"$work/kafka.log" 2>&1 </dev/null) &
  pid=$!
  echo "$pid" >"$STATE_DIR/pid"
  log "started pid $pid, logs in $work/kafka.log; waiting for readiness"

  local deadline=$((SECONDS + START_TIMEOUT))
  until grep -q 'Kafka Server started' "$work/kafka.log" && api_versions_ok "$port"; do
    if ! kill -0 "$pid" 2>/dev/null || ((SECONDS >= deadline)); then
      tail -n 40 "$work/kafka.log" >&2
      cmd_stop >/dev/null 2>&1 || true
      die "Apache Kafka did not become ready"
    fi
    sleep 0.5
  done
  log "ready: Apache Kafka $VERSION on $HOST:$port"
  echo "KAFKA_BOOTSTRAP_SERVERS=$HOST:$port"
}

# Remove the temp log dir and state files of a broker that is not running.
cleanup_state() {
  local work
  work="$(state workdir)"
  [[ -n "$work" && -d "$work" && "$work" == *learnstream-kafka-* ]] && rm -rf "$work"
  rm -f "$STATE_DIR/pid" "$STATE_DIR/port" "$STATE_DIR/workdir"
}

cmd_stop() {
  local pid waited=0
  if pid="$(running_pid)"; then
    kill -TERM "$pid"
    while kill -0 "$pid" 2>/dev/null && ((waited < STOP_GRACE * 10)); do
      sleep 0.1
      waited=$((waited + 1))
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    log "stopped pid $pid"
  else
    log "not running"
  fi
  cleanup_state
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    echo "running pid=$pid logs=$(state workdir)/kafka.log"
    echo "KAFKA_BOOTSTRAP_SERVERS=$HOST:$(state port)"
  else
    echo "stopped"
    return 3
  fi
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
