#!/usr/bin/env bash
# `npm test` (docs/testing.md "Tests"; .ci/run runs it): typecheck, lint, jest (unit, integration, infra),
# the browser tests (jest project e2e), `cdk synth`, and CI's files on the rehearsal of the
# synthesized assembly (jest project rehearsal), each phase timed on its own line.
#
# `cdk synth`, typecheck and lint run in the background beside the first jest phase, at a lower
# priority (nice): the integration files spend much of their time waiting out real debounces,
# leases and timeouts, and the three fill those idle cores instead of taking 2 minutes of their
# own before it. The jest phases otherwise run one after the other: the browser tests and the
# rehearsal should not share the cores with each other.
# A failed phase stops the run (the background three are still awaited and shown); the exit
# status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
timings=()
# phase NAME COMMAND...: runs it, records its time and status.
phase() {
  local name=$1 began=$SECONDS rc
  shift
  if [ "$status" -ne 0 ]; then return; fi
  "$@"
  rc=$?
  timings+=("$(printf '%-10s %4d s  exit %d' "$name" $((SECONDS - began)) "$rc")")
  if [ "$rc" -ne 0 ]; then status=$rc; fi
}

# The synth (its output held back and shown once it is done): the assembly the rehearsal phase
# runs (local/rehearse/, docs/rehearsal.md), the app as `cdk synth` makes it (bin/app.ts, cdk-nag
# included), with the instance secret off (`-c allowOpenAccess=true`) as the integration files the
# rehearsal runs assume. The default, closed configuration's templates are synthesized and checked
# by the infra tests; both fill and read the one bundle cache (lib/constructs/bundle-cache.ts).
logs=$(mktemp -d)
assembly=$(mktemp -d)
trap 'rm -rf "$logs" "$assembly"' EXIT
declare -A pids began
# background NAME COMMAND...: starts it, its output in $logs/NAME.
background() {
  local name=$1
  shift
  began[$name]=$SECONDS
  "$@" >"$logs/$name" 2>&1 &
  pids[$name]=$!
}
# collect NAME: waits for it, shows its output, records its time and status.
collect() {
  local name=$1 rc
  wait "${pids[$name]}"
  rc=$?
  cat "$logs/$name"
  timings+=("$(printf '%-10s %4d s  exit %d  (in the background)' "$name" $((SECONDS - began[$name])) "$rc")")
  if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
}

# nice: the jest workers' timing-sensitive tests keep the cores they ask for; these take the rest.
background synth nice -n 10 npx cdk synth --quiet -c allowOpenAccess=true -o "$assembly"
background typecheck nice -n 10 npm run typecheck
background lint nice -n 10 npm run lint

# Three jest workers on two cores: most integration files spend their time waiting out a real
# debounce, lease, window or timeout (measured: dispatch/leases 20 s of CPU in 81 s, auth/revocation
# 13 s in 58 s), so two workers left a core mostly idle. The browser tests keep two: each file
# keeps about 0.8 of a core busy (its server, its pages in the shared Chromium).
phase test:all npm run test:all -- --maxWorkers=3
collect typecheck
collect lint
collect synth
phase test:e2e npm run test:e2e
phase rehearsal env REHEARSAL_ASSEMBLY="$assembly" npm run test:rehearsal:ci

echo
echo "npm test phases:"
printf '  %s\n' "${timings[@]}"
echo "  total      $SECONDS s  exit $status"
exit "$status"
