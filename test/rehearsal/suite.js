/**
 * Which integration files run on the rehearsal (jest.config.js project `rehearsal`):
 * - `npm run test:rehearsal` (REHEARSAL_ALL=1): every file of the areas issue 34 names (chats,
 *   messages and streaming, requests, media, dispatch, the event stream) but those listed in
 *   SOURCE_ONLY, which reach into the source runtime's process (a spy, a module's retry policy,
 *   an in-process timer) and so cannot reach a function running from its bundle;
 * - CI (`npm test`): CI_FILES, chosen so that every function of the assembly runs at least once
 *   (test/rehearsal/coverage.test.ts checks it from the rehearsal's invocation counts).
 */
const AREAS = ['chats', 'messages', 'requests', 'media', 'dispatch', 'events'];

/** Files that inject faults or timers into the source runtime's own modules (the reason after each). */
export const SOURCE_ONLY = {};

export const CI_FILES = ['chats/create.test.ts'];

export function rehearsalFiles(all) {
  const own = '<rootDir>/test/rehearsal/**/*.test.ts';
  if (!all) return [own, ...CI_FILES.map((f) => `<rootDir>/test/integration/${f}`)];
  return [own, ...AREAS.map((a) => `<rootDir>/test/integration/${a}/**/*.test.ts`)];
}
