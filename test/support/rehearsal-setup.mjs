/**
 * The rehearsal project's global setup: a DynamoDB Local of its own (the assembly's table has a
 * stream, and DynamoDB Local's streams slow every table beside them: the integration files, which
 * `npm test` runs at the same time, keep theirs), plus one synthesized cloud assembly for the whole run (REHEARSAL_ASSEMBLY), made as `cdk synth` makes it
 * (bin/app.ts, cdk-nag included) with the options the integration files assume: the instance
 * secret off (`-c allowOpenAccess=true`, the default configuration) and our small web fixture as
 * the web app (no Vite build). A given REHEARSAL_ASSEMBLY (an assembly made before) is used as is.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default async function rehearsalSetup() {
  const { startDynamo } = await tsImport('../../local/dynamo.ts', import.meta.url);
  const dynamo = await startDynamo();
  globalThis.__rehearsalDynamo__ = dynamo;
  // The rehearsal's files read it as TEST_DYNAMODB_ENDPOINT (rehearsal-env.mjs).
  process.env.REHEARSAL_DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.POWERTOOLS_LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'SILENT';
  process.once('exit', () => dynamo.process.kill('SIGKILL'));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      dynamo.process.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
  }
  // Each file adds the functions it ran (rehearsed-api.ts); the teardown checks them all against the assembly.
  process.env.REHEARSAL_INVOKED_FILE = join(mkdtempSync(join(tmpdir(), 'chat-relay-invoked-')), 'invoked.txt');
  if (process.env.REHEARSAL_ASSEMBLY) return;
  const outdir = mkdtempSync(join(tmpdir(), 'chat-relay-assembly-'));
  const started = Date.now();
  const synth = spawnSync(
    join(ROOT, 'node_modules', '.bin', 'cdk'),
    ['synth', '--quiet', '-o', outdir, '-c', 'allowOpenAccess=true', '-c', 'webDir=test/infra/fixtures/web'],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  if (synth.status !== 0) throw new Error(`cdk synth for the rehearsal failed:\n${synth.stdout}\n${synth.stderr}`);
  console.log(`\nrehearsal: assembly synthesized in ${Math.round((Date.now() - started) / 1000)} s (${outdir})`);
  process.env.REHEARSAL_ASSEMBLY = outdir;
}
