/**
 * The rehearsal project's global teardown: stops its DynamoDB Local, then checks that the files that
 * ran touched every function of the assembly at least once (issue 34: CI's subset is chosen so;
 * test/rehearsal/suite.js), but the functions CDK brings and the rehearsal does not run (the web
 * bucket's deployment handler, a Python function; the custom resource Provider framework's own
 * function, whose user function the rehearsal invokes directly). For CI's files and for the full
 * suite (REHEARSAL_ALL=1), not when a run selects files itself (a path pattern or a test name).
 */
import { existsSync, readFileSync } from 'node:fs';
import { tsImport } from 'tsx/esm/api';

export default async function rehearsalTeardown(config) {
  await globalThis.__rehearsalDynamo__?.stop();
  const ledger = process.env.REHEARSAL_INVOKED_FILE;
  const partial = config.testPathPattern || config.testNamePattern || (config.nonFlagArgs ?? []).length > 0;
  if (!ledger || partial) return;
  const invoked = new Set(existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter(Boolean) : []);
  const { Assembly } = await tsImport('../../local/rehearse/assembly.ts', import.meta.url);
  const assembly = new Assembly(process.env.REHEARSAL_ASSEMBLY);
  const runnable = assembly
    .rawResources('AWS::Lambda::Function')
    .filter(({ raw }) => String(raw.Properties?.Runtime ?? '').startsWith('nodejs'))
    .filter(({ raw }) => !raw.Properties?.Environment?.Variables?.USER_ON_EVENT_FUNCTION_ARN)
    .map(({ stack, logicalId }) => (stack ? `${stack}/${logicalId}` : logicalId));
  const missing = runnable.filter((key) => !invoked.has(key));
  console.log(`\nrehearsal: the files ran ${runnable.length - missing.length} of ${runnable.length} functions`);
  if (missing.length > 0)
    throw new Error(`The rehearsal suite never ran these functions of the assembly:\n  ${missing.join('\n  ')}`);
}
