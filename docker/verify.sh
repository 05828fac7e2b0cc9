#!/usr/bin/env bash
# Builds the gateway's container image with podman and checks that it really works:
#
#   1. compose: docker/compose.yaml hangs together (services, healthchecks, depends_on
#      conditions, volumes, mounted files). It is not run: its broker images come from a registry.
#   2. base: makes podman and the base image available (../shared/tools/container-base.sh next
#      to the repository; CONTAINER_BASE_SCRIPT overrides the path).
#   3. build: docker/Dockerfile (--pull=never --network=host --format docker, so the HEALTHCHECK
#      is kept); the image's user is not root and it has a health check on /ready.
#   4. config: the image's `validate` command accepts docker/gateway.yaml and the configuration
#      the compose file runs, with the environment the compose file gives it.
#   5. start: runs the image with docker/gateway.yaml on /config, a fresh temporary directory on
#      /data, a random admin port and a random JMS_GATEWAY_ADMIN_TOKEN; waits (bounded) for /ready.
#   6. route: over the admin API, the token is enforced, and a message POSTed to queue://demo.in
#      arrives intact in queue://demo.out through the demo bridge, which reports it in /bridges.
#   7. checks: the process inside is not root, the image holds no dev dependencies, and
#      `podman healthcheck run` passes.
#   8. stop: SIGTERM (podman stop -t 20); exit code 0 and a clean shutdown in the log.
#   9. restart: a new container on the same /data still holds the routed (persistent) message.
#
# Containers and temporary files are always removed; the image (jms-gateway:dev, or $IMAGE) is
# kept so that the next build is warm. Run from anywhere: `bash docker/verify.sh`.
# Needs root (or a working rootless podman) and node on the PATH. Exits non-zero on any failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

IMAGE=${IMAGE:-jms-gateway:dev}
BASE_SCRIPT=${CONTAINER_BASE_SCRIPT:-$root/../shared/tools/container-base.sh}
READY_TIMEOUT=${READY_TIMEOUT:-60}
# The demo route docker/gateway.yaml declares.
SOURCE_QUEUE=demo.in
TARGET_QUEUE=demo.out
BRIDGE=demo

started_at=$(date +%s%N)
step_at=$started_at
# Prints how long the step took since the last call, and the total.
took() {
  local now
  now=$(date +%s%N)
  printf '  [%s: %.1f s, total %.1f s]\n' "$1" "$(((now - step_at) / 1000000))e-3" "$(((now - started_at) / 1000000))e-3"
  step_at=$now
}
step() { printf '\n--- %s\n' "$*"; }
fail() {
  printf 'verify: FAILED: %s\n' "$*" >&2
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/jms-gateway-verify.XXXXXX")
containers=()
cleanup() {
  local status=$?
  for id in "${containers[@]}"; do podman rm -f -v "$id" >/dev/null 2>&1 || true; done
  rm -rf "$work"
  if ((status == 0)); then echo "verify: OK"; else echo "verify: FAILED (exit $status)" >&2; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v node >/dev/null || fail "node is not on the PATH (the checks use its fetch)"

step "docker/compose.yaml (structure only: it needs images from a registry to run)"
compose_checked=0
if [[ -d node_modules/yaml ]]; then
  # Also writes the gateway service's environment and configuration file for the config step.
  WORK="$work" node --input-type=module -e '
    import { readFileSync, writeFileSync, existsSync } from "node:fs";
    import { resolve } from "node:path";
    import { parse } from "yaml";
    const compose = parse(readFileSync("docker/compose.yaml", "utf8"));
    const problems = [];
    const services = compose.services ?? {};
    const oneShot = (service) => service?.restart === "no";
    for (const name of ["rabbitmq", "mosquitto", "kafka", "gateway"])
      if (!services[name]) problems.push(`no service ${name}`);
    for (const [name, service] of Object.entries(services)) {
      if (!service.image && !service.build) problems.push(`${name}: neither image nor build`);
      if (name !== "gateway" && !oneShot(service) && !service.healthcheck?.test)
        problems.push(`${name}: no healthcheck`);
      for (const [dependency, spec] of Object.entries(service.depends_on ?? {})) {
        const target = services[dependency];
        if (!target) problems.push(`${name}: depends on unknown ${dependency}`);
        else if (spec?.condition === "service_healthy") {
          if (!target.healthcheck) problems.push(`${name}: ${dependency} has no healthcheck`);
        } else if (spec?.condition === "service_completed_successfully") {
          if (!oneShot(target)) problems.push(`${name}: ${dependency} is not a one-shot service`);
        } else problems.push(`${name}: ${dependency} without a healthy or completed condition`);
      }
      for (const volume of service.volumes ?? []) {
        const source = String(volume).split(":")[0];
        if (source.startsWith(".")) {
          if (!existsSync(resolve("docker", source))) problems.push(`${name}: ${source} does not exist`);
        } else if (!(source in (compose.volumes ?? {}))) problems.push(`${name}: volume ${source} is not declared`);
      }
      if (service.build && !existsSync(resolve("docker", service.build.context, service.build.dockerfile)))
        problems.push(`${name}: build.dockerfile not found`);
    }
    const gateway = services.gateway ?? {};
    for (const broker of ["rabbitmq", "mosquitto", "kafka"])
      if (gateway.depends_on?.[broker]?.condition !== "service_healthy")
        problems.push(`gateway: does not wait for ${broker} to be healthy`);
    const config = (gateway.volumes ?? []).map(String).find((v) => v.split(":")[1] === "/config/gateway.yaml");
    if (!config) problems.push("gateway: nothing mounted on /config/gateway.yaml");
    if (problems.length) {
      console.error(problems.join("\n"));
      process.exit(1);
    }
    const env = Object.entries(gateway.environment ?? {}).filter(([, v]) => !String(v).includes("${"));
    writeFileSync(`${process.env.WORK}/compose.env`, env.map(([k, v]) => `${k}=${v}\n`).join(""));
    writeFileSync(`${process.env.WORK}/compose.config`, resolve("docker", config.split(":")[0]));
    console.log(`  ${Object.keys(services).length} services; healthchecks, depends_on conditions, volumes and files consistent`);
    console.log(`  the gateway runs ${config.split(":")[0]}`);
  ' || fail "docker/compose.yaml is inconsistent (see above)"
  compose_checked=1
else
  echo "  skipped: node_modules/yaml is not installed (npm ci)"
fi
took compose

step "podman and the base image ($BASE_SCRIPT)"
[[ -f "$BASE_SCRIPT" ]] || fail "no $BASE_SCRIPT: set CONTAINER_BASE_SCRIPT to shared/tools/container-base.sh"
bash "$BASE_SCRIPT"
podman --version
took base

step "build $IMAGE"
if ! podman build --pull=never --network=host --format docker -f docker/Dockerfile -t "$IMAGE" . \
  >"$work/build.log" 2>&1; then
  tail -n 100 "$work/build.log"
  fail "podman build failed (last 100 lines above)"
fi
cached=$(grep -c -- '--> Using cache' "$work/build.log" || true)
echo "  $cached build steps came from the cache"
size=$(podman image inspect "$IMAGE" --format '{{.Size}}')
printf '  image %s: %s MB\n' "$IMAGE" "$((size / 1000000))"
user=$(podman image inspect "$IMAGE" --format '{{.User}}')
[[ -n "$user" && "$user" != root && "$user" != 0 ]] || fail "the image runs as '${user:-root}', not a non-root user"
podman image inspect "$IMAGE" --format '{{json .HealthCheck}}' | grep -q '/ready' ||
  fail "the image has no HEALTHCHECK probing /ready (built without --format docker?)"
echo "  user: $user; health check: present"
took build

token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$work/data" "$work/config"
cp docker/gateway.yaml "$work/config/gateway.yaml"

step "configuration"
# validate NAME FILE [podman options...]: the image's own `validate` command accepts FILE.
validate() {
  local name=$1 file=$2
  shift 2
  if ! podman run --rm --network=none "$@" -v "$file:/config/gateway.yaml:ro" "$IMAGE" \
    validate --config /config/gateway.yaml >"$work/validate.out" 2>&1; then
    cat "$work/validate.out" >&2
    fail "the image's validate command refuses $name (above)"
  fi
  echo "  $name: $(grep -v 'level=error' "$work/validate.out" | tail -n 1)"
}
validate docker/gateway.yaml "$work/config/gateway.yaml" -e JMS_GATEWAY_ADMIN_TOKEN="$token"
if ((compose_checked)); then
  config=$(cat "$work/compose.config")
  validate "${config#"$root"/} (compose)" "$config" --env-file "$work/compose.env"
fi
took configuration

# A free port on this machine (--network=host), away from the gateway's default 8161.
port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
port=$((20000 + RANDOM % 30000))
while port_open "$port"; do port=$((20000 + RANDOM % 30000)); done
base="http://127.0.0.1:$port"

# api METHOD PATH [JSON] [TOKEN]: prints "STATUS BODY" (status 000 when the request failed).
api() {
  AUTH_TOKEN=${4-$token} node -e '
    const [method, url, body] = process.argv.slice(1);
    const headers = {};
    if (process.env.AUTH_TOKEN) headers.authorization = `Bearer ${process.env.AUTH_TOKEN}`;
    if (body) headers["content-type"] = "application/json";
    fetch(url, { method, headers, body: body || undefined, signal: AbortSignal.timeout(5000) })
      .then(async (r) => console.log(r.status, await r.text()), (e) => console.log("000", e.message));
  ' "$1" "$base$2" "${3:-}"
}
# check "STATUS BODY" EXPECTED-STATUS JS-EXPRESSION: the body, parsed as `d`, must satisfy the expression.
check() {
  node -e '
    const [reply, status, expression] = process.argv.slice(1);
    const [got, ...rest] = reply.split(" ");
    const d = (() => { try { return JSON.parse(rest.join(" ")); } catch { return undefined; } })();
    process.exit(got === status && new Function("d", `return (${expression});`)(d) ? 0 : 1);
  ' "$1" "$2" "$3"
}

# start NAME: runs the image detached on the data and config directories; sets $cid.
start() {
  local id
  id=$(podman run -d --name "$1" --network=host \
    -e JMS_GATEWAY_ADMIN_TOKEN="$token" \
    -v "$work/data:/data:U" -v "$work/config:/config:ro" \
    "$IMAGE" run --config /config/gateway.yaml --admin-port "$port" 2>"$work/run.err") || {
    cat "$work/run.err" >&2
    fail "podman run failed"
  }
  containers+=("$id")
  cid=$id
}
# wait_ready ID: polls /ready for up to READY_TIMEOUT seconds.
wait_ready() {
  local deadline=$((SECONDS + READY_TIMEOUT))
  until [[ "$(api GET /ready '' '')" == 200* ]]; do
    if [[ "$(podman inspect "$1" --format '{{.State.Running}}')" != true ]]; then
      podman logs "$1" >&2 || true
      fail "the container exited before it was ready (log above)"
    fi
    if ((SECONDS >= deadline)); then
      podman logs "$1" >&2 || true
      fail "/ready did not answer 200 on $base within ${READY_TIMEOUT}s (log above)"
    fi
    sleep 0.5
  done
}
# stop_clean ID: SIGTERM, then exit code 0 and a clean shutdown in the log.
stop_clean() {
  local stop_at=$SECONDS code
  # (podman's complaint that it cannot remove a systemd health check timer goes to stop.err)
  podman stop -t 20 "$1" >/dev/null 2>"$work/stop.err" || {
    cat "$work/stop.err" >&2
    fail "podman stop failed"
  }
  code=$(podman inspect "$1" --format '{{.State.ExitCode}}')
  podman logs "$1" >"$work/gateway.log" 2>&1
  if [[ "$code" != 0 ]] || ! grep -q '"clean":true,"msg":"stopped"' "$work/gateway.log"; then
    cat "$work/gateway.log" >&2
    fail "the gateway did not stop cleanly on SIGTERM (exit code $code; log above)"
  fi
  echo "  stopped in $((SECONDS - stop_at)) s, exit code 0; log: ... $(grep -o '"msg":"stopping[^"]*"' "$work/gateway.log" | paste -sd ' ') ... $(grep -o '"clean":true,"msg":"stopped"' "$work/gateway.log")"
}

step "start $IMAGE (admin API on port $port, data in $work/data)"
start "jms-gateway-verify-$$"
echo "  container ${cid:0:12}"
wait_ready "$cid"
echo "  /ready answers 200"
took start

step "route queue://$SOURCE_QUEUE -> bridge $BRIDGE -> queue://$TARGET_QUEUE over the admin API"
reply=$(api GET /destinations '' '')
check "$reply" 401 'true' || fail "GET /destinations without the token answered '$reply', expected 401"
echo "  without the token: 401"
reply=$(api GET /console/ '' '')
[[ "$reply" == 200* && "$reply" == *'<script src="/console/console.js"'* ]] ||
  fail "GET /console/ answered '${reply:0:200}', expected the web console's page (200) without a token"
echo "  the web console's page: 200 without a token"
run_id="verify-$$-$RANDOM"
message=$(printf '{"type":"xml","headers":{"JMSCorrelationID":"%s","JMSDeliveryMode":"PERSISTENT","JMSPriority":7},"properties":{"run":"%s","amount":{"type":"long","value":"9007199254740993"}},"body":"<order id=\\"%s\\"/>"}' \
  "$run_id" "$run_id" "$run_id")
reply=$(api POST "/destinations/queue/$SOURCE_QUEUE/messages" "$message")
check "$reply" 201 'typeof d.messageId === "string"' || fail "POST a message to queue $SOURCE_QUEUE answered '$reply'"
echo "  POST queue/$SOURCE_QUEUE/messages: 201 ${reply#201 }"
selector=$(node -p 'encodeURIComponent(process.argv[1])' "run = '$run_id'")
# routed_check [SECONDS]: the message is in the target queue with its body, headers and typed property.
routed_check() {
  local deadline=$((SECONDS + ${1:-0})) reply
  until
    reply=$(api GET "/destinations/queue/$TARGET_QUEUE/messages?selector=$selector")
    check "$reply" 200 "d.length === 1 && d[0].type === 'xml' && d[0].body === '<order id=\"$run_id\"/>' &&
      d[0].headers.JMSCorrelationID === '$run_id' && d[0].headers.JMSPriority === 7 &&
      d[0].headers.JMSDeliveryMode === 'PERSISTENT' && d[0].properties.amount.value === '9007199254740993'"
  do
    ((SECONDS < deadline)) || fail "queue $TARGET_QUEUE has no message with run = '$run_id': '$reply'"
    sleep 0.5
  done
  echo "  GET queue/$TARGET_QUEUE/messages?selector=run='$run_id': the message, body, headers and typed property intact"
}
routed_check 15
reply=$(api GET "/destinations/queue/$SOURCE_QUEUE/messages?selector=$selector")
check "$reply" 200 'd.length === 0' || fail "the message is still in queue $SOURCE_QUEUE: '$reply'"
reply=$(api GET /bridges)
check "$reply" 200 "d.some((b) => b.name === '$BRIDGE' && b.status === 'connected' && b.counters.out >= 1)" ||
  fail "GET /bridges does not show bridge $BRIDGE connected with a message out: '$reply'"
echo "  queue/$SOURCE_QUEUE is empty for it; /bridges: $BRIDGE connected, $(node -p "JSON.stringify(JSON.parse(process.argv[1]).find((b) => b.name === '$BRIDGE').counters)" "${reply#200 }")"
reply=$(api GET /metrics)
[[ "$reply" == 200* ]] || fail "GET /metrics answered '${reply:0:200}'"
echo "  /metrics: 200"
took route

step "process user and health check"
uid=$(podman exec "$cid" id -u)
[[ "$uid" != 0 ]] || fail "the gateway runs as root inside the container"
echo "  uid inside the container: $uid ($(podman exec "$cid" id -un))"
podman top "$cid" user pid args | sed 's/^/  /'
podman exec "$cid" test ! -e /app/node_modules/typescript || fail "the image holds dev dependencies"
echo "  no dev dependencies in /app/node_modules"
# podman schedules periodic health checks through systemd timers, which this machine may not
# have; run the image's check directly.
podman healthcheck run "$cid" >/dev/null 2>"$work/health.err" || {
  cat "$work/health.err" >&2
  fail "podman healthcheck run: unhealthy"
}
echo "  podman healthcheck run: healthy"
took checks

step "stop with SIGTERM"
stop_clean "$cid"
took stop

step "restart on the same /data"
[[ -f "$work/data/gateway.db" ]] || fail "the gateway wrote no store under /data: $(ls -A "$work/data")"
echo "  /data holds $(cd "$work/data" && ls | paste -sd ' ')"
start "jms-gateway-verify-$$-restart"
wait_ready "$cid"
routed_check 0
stop_clean "$cid"
echo "  the persistent message survived the restart"
took restart

printf '\nverify: image %s (%s MB) built; it routed a message, ran as uid %s, passed its health check, stopped cleanly and kept its store (%.1f s)\n' \
  "$IMAGE" "$((size / 1000000))" "$uid" "$((($(date +%s%N) - started_at) / 1000000))e-3"
