#!/usr/bin/env bash
# `npm test` (docs/testing.md "Tests"; .ci/run runs it): typecheck, lint, `cdk synth`, jest (unit,
# integration, infra, and CI's files on the rehearsal of the synthesized assembly: jest project
# rehearsal), then the browser tests (jest project e2e), each phase timed on its own line.
#
# `cdk synth`, typecheck and lint run side by side first (below). The jest phases run alone, one
# after the other: their timing-sensitive tests (debounces, leases, timeouts) and the browser
# tests should not share the cores with a synth or with each other. (Measured: the three in the
# background at nice 10 beside the first jest phase saved about 20 s of its 2 minutes, as the jest
# workers keep the two cores about 80 % busy, and that phase's lease and timing tests failed more.)
# A failed phase stops the run (the three first ones all finish first); the exit status is the
# failure's.
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

# The synth (its output held back and shown once it is done): the assembly the rehearsal files
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
  timings+=("$(printf '%-10s %4d s  exit %d  (beside the others)' "$name" $((SECONDS - began[$name])) "$rc")")
  if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
}

background synth npx cdk synth --quiet -c allowOpenAccess=true -o "$assembly"
background typecheck npm run typecheck
background lint npm run lint
collect typecheck
collect lint
collect synth

# Three jest workers on two cores: most integration files spend their time waiting out a real
# debounce, lease, window or timeout (measured: dispatch/leases 20 s of CPU in 81 s, auth/revocation
# 13 s in 58 s), so two workers left a core mostly idle. Three still leave the cores 14.5 % idle over
# the phase (vmstat every 5 s; 44 % in the minute the long dispatch and crash files wait together):
# 610-618 s. Four took 555-573 s with 10 % idle, but on a clean clone (CI's file order, cold caches)
# they overloaded the one DynamoDB Local: 35 of 100 concurrent chunk appends outlived their
# function's time (500, by design) and 51 sequential writes took over 10 s, in two runs of two. The
# browser tests keep two: they keep the two cores busy with two (measured in the headless shell:
# three took 371 s, two 324 s; in the full browser three took 665 s, two 648 s).
#
# CI's files on the rehearsal (jest project rehearsal: test/rehearsal/suite.js) run in the same jest
# run, on the synth's assembly and a DynamoDB Local of their own: their CPU fills some of what the
# integration files leave idle while they wait (measured: 519 s and then 62 s for the rehearsal as
# a phase of its own; 552-563 s together).
phase test:all env REHEARSAL_ASSEMBLY="$assembly" npm run test:all -- --selectProjects rehearsal --maxWorkers=3
phase test:e2e npm run test:e2e

echo
echo "npm test phases:"
printf '  %s\n' "${timings[@]}"
echo "  total      $SECONDS s  exit $status"
exit "$status"
