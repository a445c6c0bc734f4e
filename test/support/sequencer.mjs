/**
 * The order jest starts test files in (jest.config.js `testSequencer`), from a measured run's
 * times (test/durations.json `seconds`; `node test/support/durations.mjs <jest --json output>...`
 * writes them again).
 *
 * The browser files start longest first, so no long one starts last and runs alone at the end while
 * the other worker sits idle. Why: jest sorts by the durations in its cache, and without a cache
 * (CI's clean clone) by file size. Size says little about a browser file: test/e2e/screens.test.ts
 * is 69 lines and the longest of them (about two minutes), so on a clean clone it started last and
 * ran alone (simulated over the measured times, two workers: 402 s against 344 s).
 *
 * The other projects' files (unit, integration, infra, rehearsal) also start longest first, with
 * the files that mostly wait out real time (test/durations.json `waiting`: a debounce, a lease, a
 * timeout; measured under 30 % of a core over their run) spread evenly through the run among the
 * ones that keep a core busy. Together (jest's own order, or by size on a clean clone) they left
 * the two cores 15 % idle under three workers, 44 % in the minute the long dispatch and crash files
 * waited together; and when the timing-sensitive ones all started together beside the infra files'
 * synths, two timing tests failed. A file the table lacks (a new one) counts as a middling one.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import TestSequencer from '@jest/test-sequencer';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { seconds: SECONDS, waiting: WAITING } = JSON.parse(
  readFileSync(new URL('../durations.json', import.meta.url), 'utf8'),
);
const waitingFiles = new Set(WAITING);
/** Seconds assumed for a file the table lacks: a browser file, another one. */
const UNKNOWN_SECONDS = { e2e: 10, other: 3 };

const Base = TestSequencer.default ?? TestSequencer;
const browser = (test) => test.context.config.displayName?.name === 'e2e';
const pathOf = (test) => relative(ROOT, test.path);

/** Longest first; the same length by path, so the order is the same on every machine. */
function longestFirst(tests, seconds) {
  return [...tests].sort((a, b) => seconds.get(b) - seconds.get(a) || (a.path < b.path ? -1 : 1));
}

/**
 * The two lists (each longest first) as one, each list's files taken as its share of the run's time
 * comes due: `waiting` spread evenly through `busy`.
 */
function spread(busy, waiting, seconds) {
  const total = (tests) => tests.reduce((sum, test) => sum + seconds.get(test), 0) || 1;
  const [busyTotal, waitingTotal] = [total(busy), total(waiting)];
  const order = [];
  let [b, w, busyDone, waitingDone] = [0, 0, 0, 0];
  while (b < busy.length || w < waiting.length) {
    const takeWaiting = b >= busy.length || (w < waiting.length && waitingDone / waitingTotal < busyDone / busyTotal);
    const test = takeWaiting ? waiting[w++] : busy[b++];
    if (takeWaiting) waitingDone += seconds.get(test);
    else busyDone += seconds.get(test);
    order.push(test);
  }
  return order;
}

export default class DurationSequencer extends Base {
  sort(tests) {
    const seconds = new Map(
      tests.map((test) => {
        const measured = SECONDS[pathOf(test)];
        return [test, typeof measured === 'number' ? measured : UNKNOWN_SECONDS[browser(test) ? 'e2e' : 'other']];
      }),
    );
    const browsers = longestFirst(tests.filter(browser), seconds);
    const others = tests.filter((test) => !browser(test));
    const waiting = longestFirst(
      others.filter((test) => waitingFiles.has(pathOf(test))),
      seconds,
    );
    const busy = longestFirst(
      others.filter((test) => !waitingFiles.has(pathOf(test))),
      seconds,
    );
    return [...browsers, ...spread(busy, waiting, seconds)];
  }
}
