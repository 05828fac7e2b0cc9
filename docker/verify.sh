#!/usr/bin/env bash
# Builds the gateway's container image with podman and checks that it really works:
#
#   0. checks that docker/compose.yaml hangs together (services, healthchecks, depends_on
#      conditions, volumes, files it mounts); it is not run: its broker images come from a registry;
#   1. makes podman and the base image available (../shared/tools/container-base.sh, next to the
#      repository; CONTAINER_BASE_SCRIPT overrides the path);
#   2. builds docker/Dockerfile (--pull=never --network=host --format docker, so the HEALTHCHECK
#      is kept) and checks the image runs as a non-root user and has a health check;
#   3. starts the image with docker/gateway.yaml mounted on /config, a fresh temporary data
#      directory on /data, a random admin port and a random JMS_GATEWAY_ADMIN_TOKEN;
#   4. waits (bounded) for /ready, then checks over the admin API that the token is enforced, that
#      a message POSTed to a queue can be browsed back with its body and properties, that the
#      process inside is not root and that `podman healthcheck run` passes;
#   5. stops the container with SIGTERM (podman stop -t 20) and checks it exited 0 after logging a
#      clean shutdown; if the gateway wrote its file store on /data, starts it again on the same
#      directory and checks the message is still there.
#
# Containers and temporary files are always removed; the image (jms-gateway:dev, or $IMAGE) is
# kept so the next run's build is warm. Run from anywhere: `bash docker/verify.sh`.
# Needs root (or a working rootless podman) and node on the PATH. Exits non-zero on any failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

IMAGE=${IMAGE:-jms-gateway:dev}
BASE_SCRIPT=${CONTAINER_BASE_SCRIPT:-$root/../shared/tools/container-base.sh}
READY_TIMEOUT=${READY_TIMEOUT:-60}
QUEUE=demo.orders # a queue docker/gateway.yaml declares

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
if [[ -d node_modules/yaml ]]; then
  node --input-type=module -e '
    import { readFileSync, existsSync } from "node:fs";
    import { parse } from "yaml";
    const compose = parse(readFileSync("docker/compose.yaml", "utf8"));
    const problems = [];
    const services = compose.services ?? {};
    for (const name of ["rabbitmq", "mosquitto", "kafka", "gateway"])
      if (!services[name]) problems.push(`no service ${name}`);
    for (const [name, service] of Object.entries(services)) {
      if (!service.image && !service.build) problems.push(`${name}: neither image nor build`);
      if (name !== "gateway" && !service.healthcheck?.test) problems.push(`${name}: no healthcheck`);
      for (const [dependency, spec] of Object.entries(service.depends_on ?? {})) {
        if (!services[dependency]) problems.push(`${name}: depends on unknown ${dependency}`);
        else if (spec?.condition !== "service_healthy") problems.push(`${name}: ${dependency} without condition service_healthy`);
        else if (!services[dependency].healthcheck) problems.push(`${name}: ${dependency} has no healthcheck`);
      }
      for (const volume of service.volumes ?? []) {
        const source = String(volume).split(":")[0];
        if (source.startsWith(".")) { if (!existsSync(`docker/${source}`)) problems.push(`${name}: no ${source} next to compose.yaml`); }
        else if (!(source in (compose.volumes ?? {}))) problems.push(`${name}: volume ${source} is not declared`);
      }
    }
    const gateway = services.gateway ?? {};
    if (gateway.build && !existsSync(`docker/${gateway.build.context}/${gateway.build.dockerfile}`)) problems.push("gateway: build.dockerfile not found");
    if (!gateway.environment?.JMS_GATEWAY_ADMIN_TOKEN) problems.push("gateway: no JMS_GATEWAY_ADMIN_TOKEN");
    if (Object.keys(gateway.depends_on ?? {}).length !== 3) problems.push("gateway: should wait for the three brokers");
    if (problems.length) { console.error(problems.join("\n")); process.exit(1); }
    console.log(`  ${Object.keys(services).length} services, healthchecks and depends_on conditions consistent`);
  ' || fail "docker/compose.yaml is inconsistent (see above)"
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

# A free port on this machine (--network=host), away from the gateway's default 8161.
port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
port=$((20000 + RANDOM % 30000))
while port_open "$port"; do port=$((20000 + RANDOM % 30000)); done
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
base="http://127.0.0.1:$port"
mkdir -p "$work/data" "$work/config"
cp docker/gateway.yaml "$work/config/gateway.yaml"

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
  local stop_at=$SECONDS
  # (podman's complaint that it cannot remove a systemd health check timer goes to stop.err)
  podman stop -t 20 "$1" >/dev/null 2>"$work/stop.err" || {
    cat "$work/stop.err" >&2
    fail "podman stop failed"
  }
  local code
  code=$(podman inspect "$1" --format '{{.State.ExitCode}}')
  podman logs "$1" >"$work/gateway.log" 2>&1
  if [[ "$code" != 0 ]] || ! grep -q '"msg":"stopped"' "$work/gateway.log"; then
    cat "$work/gateway.log" >&2
    fail "the gateway did not stop cleanly on SIGTERM (exit code $code; log above)"
  fi
  echo "  stopped in $((SECONDS - stop_at)) s, exit code 0, log: $(grep -o '"msg":"stopping"' "$work/gateway.log" | head -n 1) ... $(grep -o '"msg":"stopped"' "$work/gateway.log")"
}

step "start $IMAGE (admin API on port $port, data in $work/data)"
start "jms-gateway-verify-$$"
echo "  container ${cid:0:12}"
wait_ready "$cid"
echo "  /ready answers 200"
took start

step "admin API"
reply=$(api GET /destinations '' '')
check "$reply" 401 'true' || fail "GET /destinations without the token answered '$reply', expected 401"
echo "  without the token: 401"
run_id="verify-$$-$RANDOM"
message=$(printf '{"type":"xml","headers":{"JMSCorrelationID":"%s","JMSDeliveryMode":"PERSISTENT","JMSPriority":7},"properties":{"run":"%s","amount":{"type":"long","value":"9007199254740993"}},"body":"<order id=\\"%s\\"/>"}' \
  "$run_id" "$run_id" "$run_id")
reply=$(api POST "/destinations/queue/$QUEUE/messages" "$message")
check "$reply" 201 'typeof d.messageId === "string"' || fail "POST a message to queue $QUEUE answered '$reply'"
echo "  POST queue/$QUEUE/messages: 201 ${reply#201 }"
# browse_check: the message is in the queue with its body, headers and typed property.
browse_check() {
  local reply
  reply=$(api GET "/destinations/queue/$QUEUE/messages?selector=$(node -p 'encodeURIComponent(process.argv[1])' "run = '$run_id'")")
  check "$reply" 200 "d.length === 1 && d[0].type === 'xml' && d[0].body === '<order id=\"$run_id\"/>' &&
    d[0].headers.JMSCorrelationID === '$run_id' && d[0].headers.JMSPriority === 7 &&
    d[0].properties.amount.value === '9007199254740993'" ||
    fail "browsing queue $QUEUE for run = '$run_id' answered '$reply'"
  echo "  GET queue/$QUEUE/messages?selector=run='$run_id': the message, body and typed properties intact"
}
browse_check
reply=$(api GET "/destinations/queue/$QUEUE")
check "$reply" 200 'JSON.stringify(d).length > 2' || fail "GET /destinations/queue/$QUEUE answered '$reply'"
reply=$(api GET /metrics)
[[ "$reply" == 200* ]] || fail "GET /metrics answered '${reply:0:200}'"
echo "  destination statistics and /metrics: 200"
took 'admin API'

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
echo "  podman healthcheck run: healthy ($(podman inspect "$cid" --format '{{.State.Health.Status}}' 2>/dev/null || echo '?'))"
took checks

step "stop with SIGTERM"
stop_clean "$cid"
took stop

step "restart on the same /data"
if [[ -f "$work/data/gateway.db" ]]; then
  start "jms-gateway-verify-$$-restart"
  wait_ready "$cid"
  browse_check
  stop_clean "$cid"
  echo "  the persistent message survived the restart"
else
  echo "  skipped: the gateway wrote no store under /data ($(ls -A "$work/data" | head -c 200))"
  echo "  (the CLI ran with an in-memory store; this check runs once it opens store.path)"
fi
took restart

printf '\nverify: image %s (%s MB) built, started, served the admin API, ran as uid %s, passed its health check and stopped cleanly in %.1f s\n' \
  "$IMAGE" "$((size / 1000000))" "$uid" "$((($(date +%s%N) - started_at) / 1000000))e-3"
