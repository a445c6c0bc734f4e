/**
 * Which files run on the rehearsal of the deployment (jest.config.js project `rehearsal`):
 * - `npm run test:rehearsal` (REHEARSAL_ALL=1): the rehearsal's own tests (the fault tests, the
 *   tour of every route and job) and every integration file of the areas issue 34 names (chats,
 *   messages and streaming, requests, media, dispatch, the event stream). Its teardown checks that
 *   every function of the assembly ran (rehearsal-teardown.mjs).
 * - CI (`npm test`, bin/test.sh): CI_FILES, within the time CI has: the fault tests, the tour
 *   (every route and job, so every function of the assembly runs: the teardown checks it), and
 *   integration files of the areas whose writes cross functions (chats, requests, media uploads).
 */
const AREAS = ['chats', 'messages', 'requests', 'media', 'dispatch', 'events'];

/** Relative to test/. */
export const CI_FILES = [
  'rehearsal/faults.test.ts',
  'rehearsal/tour.test.ts',
  'integration/chats/create.test.ts',
  'integration/requests/resolve-cancel.test.ts',
  'integration/media/local-s3.test.ts',
];

export function rehearsalFiles(all) {
  if (!all) return CI_FILES.map((f) => `<rootDir>/test/${f}`);
  return ['<rootDir>/test/rehearsal/**/*.test.ts', ...AREAS.map((a) => `<rootDir>/test/integration/${a}/**/*.test.ts`)];
}
