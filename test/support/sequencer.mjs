/**
 * The order jest starts test files in (jest.config.js `testSequencer`): longest first, by the
 * seconds each file took in a measured run (test/durations.json), so no long file starts last
 * and runs alone at the end while the other workers sit idle.
 *
 * Why not jest's own order: it sorts by the durations in its cache, and without a cache (CI's
 * clean clone) by file size. Size says little here: test/e2e/screens.test.ts is 69 lines and the
 * longest browser file (about two minutes), so on a clean clone it started last and ran alone.
 * A file the table lacks (a new one) goes by jest's cache if it has a time, else as a middling
 * file. `node test/support/durations.mjs <jest --json output>...` writes the table again.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import TestSequencer from '@jest/test-sequencer';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DURATIONS = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8'));
/** Seconds assumed for a file the table and the cache lack. */
const UNKNOWN_SECONDS = 10;

const Base = TestSequencer.default ?? TestSequencer;

export default class DurationSequencer extends Base {
  sort(tests) {
    const seconds = (test) => {
      const measured = DURATIONS[relative(ROOT, test.path)];
      if (typeof measured === 'number') return measured;
      const cached = this.time(test);
      return cached == null ? UNKNOWN_SECONDS : cached / 1000;
    };
    const weight = new Map(tests.map((test) => [test, seconds(test)]));
    return [...tests].sort((a, b) => weight.get(b) - weight.get(a) || (a.path < b.path ? -1 : 1));
  }
}
