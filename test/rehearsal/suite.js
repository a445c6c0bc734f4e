/**
 * Which files run on the rehearsal of the deployment (jest.config.js project `rehearsal`):
 * - `npm run test:rehearsal` (REHEARSAL_ALL=1): the rehearsal's own tests (the fault tests, the
 *   tour of every route and job) and every integration file of the areas issue 34 names (chats,
 *   messages and streaming, requests, media, dispatch, the event stream). Its teardown checks that
 *   every function of the assembly ran (rehearsal-teardown.mjs). Not the files of SOURCE_ONLY.
 * - CI (`npm test`, bin/test.sh): CI_FILES, within the time CI has (issue 34: a subset that
 *   touches every function): the fault tests, the tour (every route and job, so every function of
 *   the assembly runs: the teardown checks it), and one everyday integration file through the
 *   same hand-over the full run uses (test/support/rehearsed-api.ts).
 */
const AREAS = ['chats', 'messages', 'requests', 'media', 'dispatch', 'events'];

/** Relative to test/. */
export const CI_FILES = ['rehearsal/faults.test.ts', 'rehearsal/tour.test.ts', 'integration/chats/create.test.ts'];

/**
 * Files of those areas that cannot run against a deployment, by nature: each reaches into the
 * test's own process (what it injects or reads that a deployment does not have). They run on the
 * sources only (the integration project). Relative to test/.
 */
export const SOURCE_ONLY = {
  'integration/dispatch/claim-client-gone.test.ts':
    'the local runtime tells a handler its client left; behind API Gateway a function never learns it (docs/divergences.md)',
  'integration/messages/stream-check.test.ts':
    "hands this process's flush consumer (jobs/flush.ts) SQS events of its own and spies on its Step Functions client",
  'integration/messages/stream-timer-start.test.ts':
    "replaces this process's stream-timer starter and spies on its DynamoDB client to order a create's commit and check",
  'integration/dispatch/retries-repair.test.ts':
    "fails the handlers' SQS calls with a middleware on this process's client (withBrokenQueue); runs the repair in it",
  'integration/dispatch/recovery.test.ts':
    "fails the handlers' SQS calls with a middleware on this process's client (withBrokenQueue); runs the sweeper in it",
  'integration/events/live-start-held.test.ts':
    "a middleware on this process's DynamoDB client holds a write's transaction after its number was taken",
  'integration/events/chunk-delivery.test.ts':
    "a middleware on this process's DynamoDB client delays chunk event puts and fails the stream's reads",
  'integration/chats/auto-rename-race.test.ts':
    "a middleware on this process's DynamoDB client sends a PATCH just before the rename's transaction goes out",
  'integration/chats/contention-staged.test.ts':
    "a middleware on this process's DynamoDB client lands another write just before a request's transaction goes out",
  'integration/chats/rewrite-reads-race.test.ts':
    "a spy on this process's DynamoDB client lands a message between a rewrite's two reads",
  'integration/requests/update-races.test.ts':
    "a middleware on this process's DynamoDB client runs a resolve or a removal right before a PATCH writes",
  'integration/chats/update-stranded.test.ts':
    "a middleware on this process's DynamoDB client fails the catalog parts' transactions; the test runs the sweeper itself",
};

/** jest testPathIgnorePatterns of the rehearsal project: the SOURCE_ONLY files. */
export const rehearsalIgnored = () =>
  Object.keys(SOURCE_ONLY).map((f) => `<rootDir>/test/${f.replace(/[.]/g, '\\.')}$`);

export function rehearsalFiles(all) {
  if (!all) return CI_FILES.map((f) => `<rootDir>/test/${f}`);
  return ['<rootDir>/test/rehearsal/**/*.test.ts', ...AREAS.map((a) => `<rootDir>/test/integration/${a}/**/*.test.ts`)];
}
