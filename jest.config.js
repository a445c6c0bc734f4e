/**
 * Native ESM jest (middy is ESM-only): esbuild strips the types of each file in isolation (test/support/esbuild-jest.mjs); `npm run
 * typecheck` does the type checking. Integration tests share one DynamoDB Local started in
 * globalSetup; each test file creates its own table. End-to-end tests (e2e) start their own, and
 * share one Chromium (each file in contexts of its own).
 */
import { rehearsalFiles, rehearsalIgnored } from './test/rehearsal/suite.js';

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-jest.mjs' },
};

export default {
  maxWorkers: 2,
  // A worker keeps every file's module graph (jest's vm modules), so it grew to about 2 GB over
  // the integration run and its garbage collection with it; one past 800 MB after a file is
  // replaced. Measured on the integration phase: 554 s and 850 s of CPU, against 579-617 s and
  // 920-966 s of CPU without.
  workerIdleMemoryLimit: '800MB',
  testTimeout: 60_000,
  // Longest files first, by a measured run's times (test/durations.json): jest's own order falls
  // back to file size on a clean clone (CI), which started the longest browser file last.
  testSequencer: '<rootDir>/test/support/sequencer.mjs',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    // The same integration files on the rehearsal of the deployment (test/rehearsal/suite.js says which).
    {
      ...common,
      displayName: 'rehearsal',
      testMatch: rehearsalFiles(process.env.REHEARSAL_ALL === '1'),
      testPathIgnorePatterns: ['/node_modules/', ...rehearsalIgnored()],
      globalSetup: '<rootDir>/test/support/rehearsal-setup.mjs',
      globalTeardown: '<rootDir>/test/support/rehearsal-teardown.mjs',
      setupFiles: ['<rootDir>/test/support/rehearsal-env.mjs'],
    },
    // Browser tests: each file starts `npm start` as it ships and connects to the run's one Chromium (test/e2e/support/).
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/e2e/support/browser-setup.mjs',
      globalTeardown: '<rootDir>/test/e2e/support/browser-teardown.mjs',
    },
  ],
};
