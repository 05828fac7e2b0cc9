#!/usr/bin/env bash
# Runs one real Apache Kafka broker (KRaft, broker+controller in one JVM) for integration tests,
# from Apache's jars on Maven Central: CI machines reach Maven Central but not Docker Hub or
# downloads.apache.org, so the jars are fetched with Maven and cached for later runs.
#
#   bash test/helpers/kafka.sh start     start a fresh broker (empty data); no-op if the port answers
#   bash test/helpers/kafka.sh stop      stop the broker this script started (pid file)
#   bash test/helpers/kafka.sh restart   stop, then start on the same data (simulates a broker restart)
#   bash test/helpers/kafka.sh status    exit 0 if the broker answers
#
# Environment (defaults in brackets):
#   KAFKA_VERSION          org.apache.kafka:kafka_2.13 version [4.1.1]
#   KAFKA_CACHE_DIR        where the jars are cached [~/.cache/jms-gateway/kafka-$KAFKA_VERSION]
#   KAFKA_STATE_DIR        config, data, log and pid file [<repo>/.kafka]
#   KAFKA_HOST             listener address [127.0.0.1]
#   KAFKA_PORT             client (PLAINTEXT) port [9092]
#   KAFKA_CONTROLLER_PORT  KRaft controller port [9093]
#   KAFKA_START_TIMEOUT    seconds to wait for the broker to answer clients [90]
#   KAFKA_HEAP_OPTS        JVM heap flags [-Xms256m -Xmx512m]
set -euo pipefail

readonly KAFKA_VERSION="${KAFKA_VERSION:-4.1.1}"
readonly SCALA_BINARY_VERSION=2.13
readonly SLF4J_VERSION=2.0.17
readonly REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly CACHE_DIR="${KAFKA_CACHE_DIR:-$HOME/.cache/jms-gateway/kafka-$KAFKA_VERSION}"
readonly STATE_DIR="${KAFKA_STATE_DIR:-$REPO_ROOT/.kafka}"
readonly HOST="${KAFKA_HOST:-127.0.0.1}"
readonly PORT="${KAFKA_PORT:-9092}"
readonly CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
readonly START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
readonly HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
readonly DATA_DIR="$STATE_DIR/data"
readonly CONFIG_FILE="$STATE_DIR/server.properties"
readonly LOG_FILE="$STATE_DIR/kafka.log"
readonly PID_FILE="$STATE_DIR/kafka.pid"

log() { printf '[kafka.sh] %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$PORT" 2>/dev/null; }

# The pid is ours only while it still runs kafka.Kafka: guards against a recycled pid.
running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'kafka\.Kafka' || return 1
  printf '%s' "$pid"
}

fetch_jars() {
  if [[ -f "$CACHE_DIR/.complete" ]]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found: install Maven (apt-get install maven) to fetch the Kafka jars"
  command -v java >/dev/null || die "java not found: install a JDK >= 17 (apt-get install openjdk-17-jre-headless)"
  log "fetching org.apache.kafka:kafka_$SCALA_BINARY_VERSION:$KAFKA_VERSION and its runtime dependencies into $CACHE_DIR"
  local work
  work="$(mktemp -d)"
  # kafka_2.13 brings the server modules (server, metadata, raft, storage, coordinators) as runtime
  # dependencies but no logging backend: slf4j-simple writes to stderr, which goes to the log file.
  # slf4j-api is pinned next to it because Kafka's own (1.7.x) would not find a 2.x backend.
  cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>jms-gateway.test</groupId>
  <artifactId>kafka-broker-jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_$SCALA_BINARY_VERSION</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-api</artifactId>
      <version>$SLF4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-simple</artifactId>
      <version>$SLF4J_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  if ! mvn -B --no-transfer-progress -Dstyle.color=never -f "$work/pom.xml" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$work/jars" >"$work/mvn.log" 2>&1; then
    tail -n 40 "$work/mvn.log" >&2
    rm -rf "$work"
    die "maven could not fetch the Kafka jars (is Maven Central reachable? is $KAFKA_VERSION a kafka_2.13 version?)"
  fi
  mkdir -p "$(dirname "$CACHE_DIR")"
  rm -rf "$CACHE_DIR"
  mv "$work/jars" "$CACHE_DIR"
  touch "$CACHE_DIR/.complete"
  rm -rf "$work"
  log "cached $(find "$CACHE_DIR" -name '*.jar' | wc -l) jars"
}

write_config() {
  mkdir -p "$STATE_DIR"
  # Static controller.quorum.voters (not the dynamic quorum of KIP-853): formats the same way on
  # Kafka 3.x and 4.x. Replication factors of 1 because there is only one broker.
  cat >"$CONFIG_FILE" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DATA_DIR
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
EOF
}

# StorageTool is Scala (kafka.tools) up to 3.x and may move to Java (org.apache.kafka.tools).
storage_tool_class() {
  local jar
  for jar in "$CACHE_DIR"/*.jar; do
    if unzip -Z1 "$jar" 2>/dev/null | grep -qx 'org/apache/kafka/tools/StorageTool.class'; then
      echo org.apache.kafka.tools.StorageTool
      return 0
    fi
  done
  echo kafka.tools.StorageTool
}

format_storage() {
  local cluster_id
  # A cluster id is 16 random bytes, base64url without padding (what `StorageTool random-uuid` prints).
  # Like Kafka's own generator, draw again when it starts with "-": the format command would read
  # such an id as an option and refuse to run.
  cluster_id="-"
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  rm -rf "$DATA_DIR"
  mkdir -p "$DATA_DIR"
  log "formatting $DATA_DIR (cluster id $cluster_id)"
  # shellcheck disable=SC2086
  java $HEAP_OPTS -cp "$CACHE_DIR/*" "$(storage_tool_class)" format \
    -t "$cluster_id" -c "$CONFIG_FILE" >>"$LOG_FILE" 2>&1 \
    || {
      tail -n 40 "$LOG_FILE" >&2
      die "formatting the Kafka storage failed"
    }
}

# Answers clients = the port is open and a metadata request succeeds. kafkajs is what the gateway
# uses; before `npm ci` it is not there, then the broker's own "started" log line has to do.
answers_clients() {
  port_open || return 1
  if (cd "$REPO_ROOT" && node -e "require.resolve('kafkajs')" >/dev/null 2>&1); then
    (cd "$REPO_ROOT" && timeout 15 node --input-type=module -e "
      import { Kafka, logLevel } from 'kafkajs';
      const admin = new Kafka({ brokers: ['$HOST:$PORT'], logLevel: logLevel.NOTHING,
        connectionTimeout: 2000, requestTimeout: 5000, retry: { retries: 0 } }).admin();
      try { await admin.connect(); await admin.listTopics(); } finally { await admin.disconnect(); }
    " >/dev/null 2>&1)
  else
    grep -q 'Kafka Server started' "$LOG_FILE" 2>/dev/null
  fi
}

wait_until_ready() {
  local pid="$1" deadline=$((SECONDS + START_TIMEOUT))
  until answers_clients; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "--- last lines of $LOG_FILE ---"
      tail -n 60 "$LOG_FILE" >&2 || true
      rm -f "$PID_FILE"
      die "the Kafka broker exited during startup"
    fi
    if ((SECONDS >= deadline)); then
      log "--- last lines of $LOG_FILE ---"
      tail -n 60 "$LOG_FILE" >&2 || true
      stop_broker
      die "the Kafka broker did not answer on $HOST:$PORT within ${START_TIMEOUT}s"
    fi
    sleep 0.5
  done
}

launch() {
  local keep_data="$1"
  fetch_jars
  write_config
  if [[ "$keep_data" != keep || ! -f "$DATA_DIR/meta.properties" ]]; then
    : >"$LOG_FILE"
    format_storage
  fi
  log "starting Kafka $KAFKA_VERSION on $HOST:$PORT (log: $LOG_FILE)"
  # setsid: the broker outlives this script and is not hit by signals sent to the caller's group.
  # shellcheck disable=SC2086
  setsid nohup java $HEAP_OPTS -XX:+UseG1GC -Djava.awt.headless=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.showDateTime=true \
    -Dorg.slf4j.simpleLogger.dateTimeFormat="yyyy-MM-dd'T'HH:mm:ss.SSS" \
    -cp "$CACHE_DIR/*" kafka.Kafka "$CONFIG_FILE" >>"$LOG_FILE" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  local started=$SECONDS
  wait_until_ready "$pid"
  log "Kafka answers on $HOST:$PORT (pid $pid, ready in $((SECONDS - started))s)"
}

stop_broker() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    log "no broker started by kafka.sh is running"
    return 0
  fi
  log "stopping Kafka (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      log "Kafka did not stop within 30s, killing it"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  rm -f "$PID_FILE"
}

main() {
  case "${1:-}" in
    start)
      if port_open; then
        log "something already answers on $HOST:$PORT, not starting another broker"
        return 0
      fi
      launch fresh
      ;;
    stop) stop_broker ;;
    restart)
      stop_broker
      # The port must be free, or `start` semantics would silently reuse a foreign broker.
      local deadline=$((SECONDS + 30))
      while port_open; do
        ((SECONDS < deadline)) || die "$HOST:$PORT still answers after stop: a broker not started by kafka.sh?"
        sleep 0.2
      done
      launch keep
      ;;
    status)
      if answers_clients; then
        log "Kafka answers on $HOST:$PORT"
      else
        log "nothing answers on $HOST:$PORT"
        return 1
      fi
      ;;
    *)
      echo "usage: $0 start|stop|restart|status" >&2
      return 2
      ;;
  esac
}

main "$@"
