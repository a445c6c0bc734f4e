#!/usr/bin/env bash
# `npm test` (README "Tests"; .ci/run runs it): typecheck, lint, jest (unit, integration, infra),
# the browser tests (jest project e2e) and `cdk synth`, each phase timed on its own line.
#
# `cdk synth` runs beside typecheck and lint, not after everything: all three are one process
# busy on one core at a time (tsc, eslint; the synth bundles its functions one esbuild child
# after another), so on two cores the pair costs the longer of the two instead of their sum.
# The jest phases run alone, as before: their timing-sensitive tests (debounces, leases,
# timeouts) and the browser tests should not share the cores with a synth.
# As with the `&&` chain it replaces, a failed phase stops the run (typecheck and lint still
# wait for the synth, which is already running); the exit status is the failure's.
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

# The synth, in the background; its output is held back and shown once it is done.
synth_log=$(mktemp)
trap 'rm -f "$synth_log"' EXIT
synth_began=$SECONDS
npm run synth >"$synth_log" 2>&1 &
synth_pid=$!

phase typecheck npm run typecheck
phase lint npm run lint

wait "$synth_pid"
synth_rc=$?
cat "$synth_log"
timings+=("$(printf '%-10s %4d s  exit %d  (beside typecheck and lint)' synth $((SECONDS - synth_began)) "$synth_rc")")
if [ "$synth_rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$synth_rc; fi

phase test:all npm run test:all
phase test:e2e npm run test:e2e

echo
echo "npm test phases:"
printf '  %s\n' "${timings[@]}"
echo "  total      $SECONDS s  exit $status"
exit "$status"
