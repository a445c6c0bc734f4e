/**
 * Which files run on the rehearsal of the deployment (jest.config.js project `rehearsal`):
 * - `npm run test:rehearsal` (REHEARSAL_ALL=1): the rehearsal's own tests (the fault tests, the
 *   tour of every route and job) and every integration file of the areas issue 34 names (chats,
 *   messages and streaming, requests, media, dispatch, the event stream). Its teardown checks that
 *   every function of the assembly ran (rehearsal-teardown.mjs).
 * - CI (`npm test`, bin/test.sh): CI_FILES, within the time CI has (issue 34: a subset that
 *   touches every function): the fault tests, the tour (every route and job, so every function of
 *   the assembly runs: the teardown checks it), and one everyday integration file through the
 *   same hand-over the full run uses (test/support/rehearsed-api.ts).
 */
const AREAS = ['chats', 'messages', 'requests', 'media', 'dispatch', 'events'];

/** Relative to test/. */
export const CI_FILES = [
  'rehearsal/faults.test.ts',
  'rehearsal/tour.test.ts',
  'integration/chats/create.test.ts',
];

export function rehearsalFiles(all) {
  if (!all) return CI_FILES.map((f) => `<rootDir>/test/${f}`);
  return ['<rootDir>/test/rehearsal/**/*.test.ts', ...AREAS.map((a) => `<rootDir>/test/integration/${a}/**/*.test.ts`)];
}
