/**
 * Writes test/durations.json (the file order of test/support/sequencer.mjs) from jest's JSON
 * reports: `npx jest ... --json --outputFile=run.json`, then
 * `node test/support/durations.mjs run.json [more.json ...]`. Seconds per file, relative to the
 * project, for the browser files (the only ones sequencer.mjs orders by it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const reports = process.argv.slice(2);
if (reports.length === 0) throw new Error('usage: node test/support/durations.mjs <jest --json output>...');
const seconds = {};
for (const report of reports) {
  for (const file of JSON.parse(readFileSync(report, 'utf8')).testResults) {
    // Relative to the project that ran it (which may be another checkout of it).
    const path =
      /(test\/(?:unit|integration|infra|rehearsal|e2e)\/.*)$/.exec(file.name)?.[1] ?? relative(ROOT, file.name);
    const took = Math.round((file.endTime - file.startTime) / 100) / 10;
    // Only the browser files' order comes from the table (sequencer.mjs).
    if (path.startsWith('test/e2e/')) seconds[path] = Math.max(seconds[path] ?? 0, took);
  }
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(new URL('../durations.json', import.meta.url), `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
