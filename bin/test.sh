#!/usr/bin/env bash
# `npm test` (README "Tests"; .ci/run runs it): typecheck, lint, jest (unit, integration, infra),
# the browser tests (jest project e2e), `cdk synth`, and CI's files on the rehearsal of the
# synthesized assembly (jest project rehearsal), each phase timed on its own line.
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

# The synth, in the background; its output is held back and shown once it is done. It is the
# assembly the rehearsal phase runs (local/rehearse/, README "Rehearsal of the deployment"): the
# app as `cdk synth` makes it (bin/app.ts, cdk-nag included), with the instance secret off
# (`-c allowOpenAccess=true`) as the integration files the rehearsal runs assume. The default,
# closed configuration's templates are synthesized and checked by the infra tests.
synth_log=$(mktemp)
assembly=$(mktemp -d)
trap 'rm -f "$synth_log"; rm -rf "$assembly"' EXIT
synth_began=$SECONDS
npx cdk synth --quiet -c allowOpenAccess=true -o "$assembly" >"$synth_log" 2>&1 &
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
phase rehearsal env REHEARSAL_ASSEMBLY="$assembly" npm run test:rehearsal:ci

echo
echo "npm test phases:"
printf '  %s\n' "${timings[@]}"
echo "  total      $SECONDS s  exit $status"
exit "$status"
