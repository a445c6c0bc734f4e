/**
 * Writes test/durations.json (the file order of test/support/sequencer.mjs) from jest's JSON
 * reports: `npx jest ... --json --outputFile=run.json`, then
 * `node test/support/durations.mjs run.json [more.json ...]`: `seconds` per file, relative to the
 * project (a file in no report keeps its old figure). The `waiting` list (the files that mostly
 * wait out real time: under 30 % of a core over their run) is kept as it is: jest's reports do not
 * say what CPU a file used (a setup file that records process.cpuUsage per file does).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const reports = process.argv.slice(2);
if (reports.length === 0) throw new Error('usage: node test/support/durations.mjs <jest --json output>...');
const table = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8'));
const seconds = { ...table.seconds };
const fresh = {};
for (const report of reports) {
  for (const file of JSON.parse(readFileSync(report, 'utf8')).testResults) {
    // Relative to the project that ran it (which may be another checkout of it).
    const path =
      /(test\/(?:unit|integration|infra|rehearsal|e2e)\/.*)$/.exec(file.name)?.[1] ?? relative(ROOT, file.name);
    const took = Math.round((file.endTime - file.startTime) / 100) / 10;
    fresh[path] = Math.max(fresh[path] ?? 0, took);
  }
}
Object.assign(seconds, fresh);
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(
  new URL('../durations.json', import.meta.url),
  `${JSON.stringify({ seconds: sorted, waiting: table.waiting }, null, 2)}\n`,
);
console.log(`test/durations.json: ${Object.keys(fresh).length} files measured, ${Object.keys(sorted).length} in all`);
