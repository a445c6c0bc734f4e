/**
 * The rehearsal project's global setup: the integration project's DynamoDB Local, plus one
 * synthesized cloud assembly for the whole run (REHEARSAL_ASSEMBLY), made as `cdk synth` makes it
 * (bin/app.ts, cdk-nag included) with the options the integration files assume: the instance
 * secret off (`-c allowOpenAccess=true`, the default configuration) and our small web fixture as
 * the web app (no Vite build). A given REHEARSAL_ASSEMBLY (an assembly made before) is used as is.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import globalSetup from './global-setup.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default async function rehearsalSetup() {
  await globalSetup();
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
