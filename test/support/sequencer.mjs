/**
 * The order jest starts test files in (jest.config.js `testSequencer`). The browser files start
 * longest first, by the seconds each took in a measured run (test/durations.json), so no long one
 * starts last and runs alone at the end while the other worker sits idle. Every other file keeps
 * jest's own order.
 *
 * Why: jest sorts by the durations in its cache, and without a cache (CI's clean clone) by file
 * size. Size says little about a browser file: test/e2e/screens.test.ts is 69 lines and the
 * longest of them (about two minutes), so on a clean clone it started last and ran alone
 * (simulated over the measured times, two workers: 402 s against 344 s). For the other projects
 * the order barely matters (their 181 files are many and short: 601 s against 599 s), and jest's
 * order keeps the CPU-heavy synths and bundles of the infra files apart from the start of the
 * timing-sensitive dispatch and rate-limit files (ordered by time, they all started together on a
 * clean clone, and two timing tests failed). A browser file the table lacks (a new one) counts as
 * a middling one. `node test/support/durations.mjs <jest --json output>...` writes the table again.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import TestSequencer from '@jest/test-sequencer';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DURATIONS = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8'));
/** Seconds assumed for a browser file the table lacks. */
const UNKNOWN_SECONDS = 10;

const Base = TestSequencer.default ?? TestSequencer;

export default class DurationSequencer extends Base {
  sort(tests) {
    const browser = (test) => test.context.config.displayName?.name === 'e2e';
    if (!tests.some(browser)) return super.sort(tests);
    const seconds = (test) => {
      const measured = DURATIONS[relative(ROOT, test.path)];
      return typeof measured === 'number' ? measured : UNKNOWN_SECONDS;
    };
    const others = super.sort(tests.filter((test) => !browser(test)));
    const weight = new Map(tests.map((test) => [test, seconds(test)]));
    const browsers = tests.filter(browser).sort((a, b) => weight.get(b) - weight.get(a) || (a.path < b.path ? -1 : 1));
    return [...browsers, ...others];
  }
}
