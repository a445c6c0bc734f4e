/**
 * Small stand-ins for the rehearsal's function host and IAM gateway (local/rehearse/types.ts), for
 * the tests of the parts that drive functions: an Invoker whose functions are local async
 * handlers (each call recorded), and an Authorizer that allows exactly the (principal, action,
 * resource) triples it is given. Neither is storage: the queues, tables and streams under test are
 * the real emulators.
 */
import type { Authorizer, FunctionSpec, Invoker } from '../../local/rehearse/types.js';
import { FunctionError, REHEARSAL_ACCOUNT, REHEARSAL_REGION } from '../../local/rehearse/types.js';

export type FakeHandler = (event: any) => Promise<unknown>;

export interface FakeFunction {
  spec: FunctionSpec;
  calls: unknown[];
  handler: FakeHandler;
}

export function fakeFunction(name: string, overrides: Partial<FunctionSpec> = {}): FunctionSpec {
  return {
    key: `/${name}`,
    logicalId: name,
    name,
    arn: `arn:aws:lambda:${REHEARSAL_REGION}:${REHEARSAL_ACCOUNT}:function:${name}`,
    codeDir: '/nowhere',
    handler: 'index.handler',
    runtime: 'nodejs22.x',
    memoryMb: 128,
    timeoutSeconds: 1,
    environment: {},
    roleArn: `arn:aws:iam::${REHEARSAL_ACCOUNT}:role/${name}-role`,
    policies: [],
    ...overrides,
  };
}

export class FakeInvoker implements Invoker {
  readonly functions = new Map<string, FunctionSpec>();
  readonly #entries = new Map<string, FakeFunction>();

  add(spec: FunctionSpec, handler: FakeHandler): FakeFunction {
    const entry: FakeFunction = { spec, calls: [], handler };
    this.functions.set(spec.key, spec);
    this.#entries.set(spec.key, entry);
    return entry;
  }

  find(arnOrName: string): FunctionSpec | undefined {
    return [...this.functions.values()].find(
      (f) => f.name === arnOrName || f.arn === arnOrName || arnOrName.startsWith(`${f.arn}:`),
    );
  }

  async invoke(key: string, event: unknown): Promise<unknown> {
    const entry = this.#entries.get(key);
    if (!entry) throw new Error(`no function ${key}`);
    entry.calls.push(structuredClone(event));
    try {
      return await entry.handler(event);
    } catch (error) {
      throw new FunctionError(key, 'Unhandled', (error as Error).message, (error as Error).name);
    }
  }
}

/** Allows what `grant` was told, and refuses everything else (with the asked triple in the message). */
export class FakeAuthorizer implements Authorizer {
  readonly #allowed = new Set<string>();
  readonly asked: string[] = [];

  grant(principal: string, actions: readonly string[], resource: string): this {
    for (const action of actions) this.#allowed.add(`${principal} ${action} ${resource}`);
    return this;
  }

  async authorize(principal: string, action: string, resource: string) {
    const triple = `${principal} ${action} ${resource}`;
    this.asked.push(triple);
    const allowed = this.#allowed.has(triple);
    return { allowed, message: allowed ? 'allowed' : `no statement allows ${action}` };
  }
}
