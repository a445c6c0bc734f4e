/**
 * `npm run cost`: the monthly AWS bill of the named workloads (workloads.ts), from the
 * operation table (operations.ts), the bench's measured figures and the dated price table
 * (prices.ts).
 *
 * Reads .bench/results.json (written by `npm run bench`), or the files given as arguments,
 * pooled (e.g. the results of several `BENCH_ONLY=<part>` runs:
 * `npm run cost -- messages.json requests.json dispatch.json events.json`). An operation the
 * bench did not measure uses the table's own duration, and is marked so.
 *
 * Prints: per operation, AWS-terms WRU/RRU beside DynamoDB Local's report (Local counts a
 * transaction as 2 WCU per KB of its largest item and no GSI copy); per workload, a table
 * with one line per cost item; a tab's cost (tab.ts: one web app tab open all day, with and without
 * the hidden-tab policy); last, one summary line per workload: `typical: $12.34/month`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BenchResults, CostLine } from './model.js';
import {
  billedMs,
  measuredFor,
  monthLines,
  operationRru,
  operationWru,
  poolBench,
  pumpCycles,
  sseRruPerMinute,
  total,
} from './model.js';
import { floorLines } from './floor.js';
import { OPERATIONS } from './operations.js';
import { PRICES, PRICES_AS_OF, PRICES_REGION } from './prices.js';
import { HIDDEN_RELEASE_MIN, TAB_ALL_DAY, tabCost } from './tab.js';
import { STREAM_TAIL_MIN, WORKLOADS } from './workloads.js';

const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['.bench/results.json'];
const results: BenchResults[] = [];
for (const file of files) {
  const path = resolve(file);
  if (!existsSync(path)) {
    console.error(`${file}: not found (run \`npm run bench\` first); using the operation table's own figures`);
    continue;
  }
  results.push(JSON.parse(readFileSync(path, 'utf8')) as BenchResults);
}
const bench = poolBench(results);

/** Columns left-aligned, except those listed as numeric (right-aligned). */
function textTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: readonly number[],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (numeric.includes(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const money = (n: number) => (n >= 0.995 ? `$${n.toFixed(2)}` : n >= 0.0005 ? `$${n.toFixed(3)}` : `$${n.toFixed(4)}`);
const num = (n: number) =>
  n >= 100 ? Math.round(n).toLocaleString('en-US') : n >= 1 ? n.toFixed(2) : n.toPrecision(2);
const unitPrice = (n: number) => (n >= 0.01 ? `$${n.toFixed(3)}` : `$${(n * 1e6).toFixed(2)}/M`);

const out: string[] = [];
out.push(
  `Cost model: AWS list prices ${PRICES_REGION} as of ${PRICES_AS_OF} (no free tier), 30-day month; bench: ` +
    (results.length === 0
      ? 'none'
      : `${files.join(', ')} (${results.map((r) => r.meta?.finishedAt ?? '?').join(', ')})`),
);
out.push('');

// Per operation: AWS terms beside DynamoDB Local's report.
out.push(
  textTable(
    ['operation', 'bench n', 'calls code/bench', 'WRU AWS', 'WCU Local', 'RRU AWS', 'RCU Local', 'billed ms', 'MB'],
    OPERATIONS.map((op) => {
      const m = measuredFor(op, bench);
      return [
        op.id,
        m ? String(m.samples) : op.bench ? 'not run' : '(job)',
        `${op.calls} / ${m ? m.calls.toFixed(1) : '-'}`,
        num(operationWru(op)),
        m ? num(m.localWcu) : '-',
        num(operationRru(op)),
        m ? num(m.localRcu) : '-',
        `${Math.round(billedMs(op, bench)).toLocaleString('en-US')}${m ? '' : '*'}`,
        String(op.memoryMb),
      ];
    }),
    [1, 2, 3, 4, 5, 6, 7, 8],
  ),
);
const sse = sseRruPerMinute(bench);
const empty = OPERATIONS.find((op) => op.id === 'claim.empty')!;
out.push(
  `* not measured: the table's duration. SSE idle connection: ${sse.calls.toFixed(1)} DynamoDB calls/min` +
    `${bench.sseIdle ? ' (bench)' : ' (table)'} = ${sse.rru.toFixed(1)} RRU/min on AWS` +
    `${sse.localRcu !== undefined ? ` (DynamoDB Local reports ${sse.localRcu.toFixed(1)})` : ''}. ` +
    `A claim pump: ${Math.round(pumpCycles(empty, bench, 50)).toLocaleString('en-US')} empty claims/month.`,
);

/** A month's lines as a table; lines under `foldUnder` dollars are folded into one (readability). */
function linesTable(lines: readonly CostLine[], foldUnder = 0): string {
  const shown = lines.filter((l) => l.dollars >= foldUnder);
  const rest = lines.filter((l) => l.dollars < foldUnder);
  const rows = shown.map((l) => [
    l.service,
    l.what,
    `${num(l.quantity)} ${l.unit}`,
    unitPrice(l.unitPrice),
    money(l.dollars),
  ]);
  if (rest.length > 0)
    rows.push(['(other)', `${rest.length} items under ${money(foldUnder)} each`, '', '', money(total(rest))]);
  rows.push(['TOTAL', '', '', '', money(total(lines))]);
  return textTable(['service', 'what', 'quantity', 'unit price', '$/month'], rows, [2, 3, 4]);
}

const totals: [string, number][] = [];
for (const w of WORKLOADS) {
  const lines = monthLines(w, OPERATIONS, bench, PRICES);
  totals.push([w.name, total(lines)]);
  out.push('');
  out.push(`${w.name}: ${w.description}`);
  out.push(linesTable(lines, 0.005));
}

// The floors: what CONTRACT.md and ARCHITECTURE.md force on any implementation (floor.ts).
const floors: [string, number][] = WORKLOADS.map((w) => [w.name, total(floorLines(w, OPERATIONS, PRICES))]);
const typical = WORKLOADS.find((w) => w.name === 'typical');
out.push('');
out.push(
  'floor of typical: what CONTRACT.md and ARCHITECTURE.md force on any implementation (a lower bound, floor.ts)',
);
if (typical) out.push(linesTable(floorLines(typical, OPERATIONS, PRICES)));
out.push('');
out.push(floors.map(([name, sum]) => `floor of ${name}: $${sum.toFixed(2)}`).join('; '));

// A tab's cost: one web app tab's event stream, open all day, with and without the hidden-tab policy.
out.push('');
out.push(
  `A tab's cost: one web app tab open all day (${TAB_ALL_DAY.visibleHours} h visible, then ${TAB_ALL_DAY.hiddenHours} h ` +
    `hidden), its event stream priced as the SSE lines above (what the tab adds to the instance's month)`,
);
const tabRows: string[][] = [];
for (const name of ['idle', 'typical']) {
  const base = WORKLOADS.find((w) => w.name === name);
  if (!base) continue;
  for (const policy of [false, true]) {
    const cost = tabCost(TAB_ALL_DAY, policy, base, OPERATIONS, bench, PRICES);
    tabRows.push([
      policy
        ? `released after ${HIDDEN_RELEASE_MIN} min hidden (+ ${STREAM_TAIL_MIN} min function tail)`
        : 'no hidden-tab policy: connected 24 h',
      name === 'idle' ? 'no events' : `${name} (its events)`,
      cost.streamHoursPerDay.toFixed(2),
      money(cost.perDay),
      money(cost.perMonth),
    ]);
  }
}
out.push(textTable(['policy', 'instance', 'stream h/day', '$/day', '$/month'], tabRows, [2, 3, 4]));

out.push('');
for (const [name, sum] of totals) out.push(`${name}: $${sum.toFixed(2)}/month`);
console.log(out.join('\n'));
