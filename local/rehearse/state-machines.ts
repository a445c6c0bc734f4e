/**
 * The assembly's Step Functions state machines: validated with asl-validator, run by the
 * interpreter (asl.ts), and served as a small Step Functions endpoint (AWS JSON 1.0), since the
 * functions start executions through their bundled `@aws-sdk/client-sfn`.
 *
 *   validateDefinition(text) -> Definition        throws StateMachineDefinitionError (asl-validator's errors)
 *   startStateMachines({ machines, invoker, authorizer, timeScale?, port?, log? })
 *     -> Promise<{ endpoint: string; executions(): ExecutionRecord[]; stop(): Promise<void> }>
 *     machines: StateMachineSpec[] = { logicalId, name, arn, roleArn, definition (resolved JSON text) }
 *
 * Operations (X-Amz-Target `AWSStepFunctions.<op>`): StartExecution (name uniqueness as AWS has it
 * for STANDARD machines: the same name and input as a running execution answers that execution;
 * a closed one, or other input, is ExecutionAlreadyExists), DescribeExecution, StopExecution.
 * It listens on 127.0.0.1 only; the IAM gateway sits in front of it and checks
 * states:StartExecution, so it checks no signature itself.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { LAMBDA_INVOKE, runExecution } from './asl.js';
import type { Definition, ExecutionResult } from './asl.js';
import type { Authorizer, Invoker } from './types.js';
import { REHEARSAL_ACCOUNT, REHEARSAL_REGION } from './types.js';

export interface StateMachineSpec {
  logicalId: string;
  name: string;
  arn: string;
  roleArn: string;
  /** The DefinitionString with every reference resolved (JSON text). */
  definition: string;
}

export interface ExecutionRecord {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  startDate: Date;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  stopDate?: Date | undefined;
  output?: string | undefined;
  error?: string | undefined;
  cause?: string | undefined;
  done: Promise<void>;
}

export class StateMachineDefinitionError extends Error {}

const FUNCTION_ARN = /^arn:aws:lambda:[^:]+:\d{12}:function:[^:]+(:[^:]+)?$/;
const SUPPORTED = new Set(['Pass', 'Wait', 'Choice', 'Task', 'Succeed', 'Fail']);

/** The states this interpreter cannot run, each in a sentence (empty: it runs them all). */
function unsupportedStates(definition: Definition): string[] {
  const out: string[] = [];
  if ((definition as { QueryLanguage?: string }).QueryLanguage === 'JSONata') out.push('the JSONata query language');
  for (const [name, state] of Object.entries(definition.States)) {
    if (!SUPPORTED.has(String(state.Type))) out.push(`state ${name}: type ${String(state.Type)}`);
    if (state.Type === 'Task' && state.Resource !== LAMBDA_INVOKE && !FUNCTION_ARN.test(String(state.Resource))) {
      out.push(`state ${name}: resource ${String(state.Resource)} (only Lambda)`);
    }
    if (state.QueryLanguage === 'JSONata') out.push(`state ${name}: JSONata`);
  }
  return out;
}

type AslValidator = (
  definition: unknown,
  options?: { checkPaths: boolean; checkArn: boolean },
) => { isValid: boolean; errorsText: (separator?: string) => string };
const aslValidator = createRequire(import.meta.url)('asl-validator') as AslValidator;

/** The definition, parsed, once asl-validator and this interpreter both accept it. */
export function validateDefinition(text: string, machine = 'the state machine'): Definition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new StateMachineDefinitionError(`${machine}: the definition is not JSON: ${(error as Error).message}`);
  }
  // The validator writes defaults into what it is given: it gets a copy.
  const verdict = aslValidator(structuredClone(parsed), { checkPaths: true, checkArn: true });
  if (!verdict.isValid) {
    throw new StateMachineDefinitionError(`${machine}: invalid Amazon States Language:\n${verdict.errorsText('\n')}`);
  }
  const definition = parsed as Definition;
  const unsupported = unsupportedStates(definition);
  if (unsupported.length > 0) {
    throw new StateMachineDefinitionError(`${machine}: not rehearsed: ${unsupported.join('; ')}`);
  }
  return definition;
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** Execution names as Step Functions takes them: 1-80 characters, none of these. */
const INVALID_NAME = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/;

export async function startStateMachines(options: {
  machines: readonly StateMachineSpec[];
  invoker: Invoker;
  authorizer: Authorizer;
  /** Multiplies waits, retry intervals and timeouts. @default 1 */
  timeScale?: number;
  /** @default 0 (any free port) */
  port?: number;
  log?: (line: string) => void;
}) {
  const machines = new Map(
    options.machines.map((m) => [m.arn, { spec: m, definition: validateDefinition(m.definition, m.name) }]),
  );
  const executions = new Map<string, ExecutionRecord>();
  const running = new Map<string, AbortController>();

  const start = (body: Record<string, unknown>) => {
    const machine = machines.get(String(body.stateMachineArn));
    if (!machine)
      throw new ApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${String(body.stateMachineArn)}'`);
    const name = body.name === undefined ? randomUUID() : String(body.name);
    if (name.length < 1 || name.length > 80 || INVALID_NAME.test(name))
      throw new ApiError('InvalidName', `Invalid Name: '${name}'`);
    const input = body.input === undefined ? '{}' : String(body.input);
    let parsed: unknown;
    try {
      parsed = JSON.parse(input);
    } catch {
      throw new ApiError('InvalidExecutionInput', 'Invalid State Machine Execution Input: not JSON');
    }
    const executionArn = `arn:aws:states:${REHEARSAL_REGION}:${REHEARSAL_ACCOUNT}:execution:${machine.spec.name}:${name}`;
    const existing = executions.get(executionArn);
    if (existing) {
      if (existing.status === 'RUNNING' && existing.input === input) return existing;
      throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    }
    const abort = new AbortController();
    const record: ExecutionRecord = {
      executionArn,
      stateMachineArn: machine.spec.arn,
      name,
      input,
      startDate: new Date(),
      status: 'RUNNING',
      done: Promise.resolve(),
    };
    executions.set(executionArn, record);
    running.set(executionArn, abort);
    record.done = runExecution(
      machine.definition,
      parsed,
      {
        executionArn,
        name,
        stateMachineArn: machine.spec.arn,
        stateMachineName: machine.spec.name,
        roleArn: machine.spec.roleArn,
        startTime: record.startDate,
      },
      {
        invoker: options.invoker,
        authorizer: options.authorizer,
        timeScale: options.timeScale ?? 1,
        signal: abort.signal,
        log: options.log,
      },
    ).then((result: ExecutionResult) => {
      running.delete(executionArn);
      record.stopDate = new Date();
      if (record.status !== 'RUNNING') return; // stopped meanwhile
      record.status = result.status;
      if (result.status === 'SUCCEEDED') record.output = JSON.stringify(result.output);
      else Object.assign(record, { error: result.error, cause: result.cause });
    });
    return record;
  };

  const find = (body: Record<string, unknown>) => {
    const record = executions.get(String(body.executionArn));
    if (!record)
      throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${String(body.executionArn)}'`);
    return record;
  };
  const seconds = (d: Date | undefined) => (d ? d.getTime() / 1000 : undefined);

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    StartExecution: (body) => {
      const r = start(body);
      return { executionArn: r.executionArn, startDate: seconds(r.startDate) };
    },
    DescribeExecution: (body) => {
      const r = find(body);
      const { done: _done, startDate, stopDate, ...rest } = r;
      return { ...rest, startDate: seconds(startDate), stopDate: seconds(stopDate) };
    },
    StopExecution: (body) => {
      const r = find(body);
      if (r.status === 'RUNNING') {
        Object.assign(r, { status: 'ABORTED', stopDate: new Date(), error: body.error, cause: body.cause });
        running.get(r.executionArn)?.abort();
      }
      return { stopDate: seconds(r.stopDate) };
    },
  };

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('AWSStepFunctions.')
      ? operations[target.slice('AWSStepFunctions.'.length)]
      : undefined;
    try {
      if (req.method !== 'POST' || !operation)
        throw new ApiError('UnknownOperationException', `Unknown operation ${target}`);
      const text = Buffer.concat(chunks).toString('utf8');
      answer(res, 200, operation((text ? JSON.parse(text) : {}) as Record<string, unknown>));
    } catch (error) {
      if (error instanceof ApiError) return answer(res, 400, { __type: error.type, message: error.message });
      if (error instanceof SyntaxError)
        return answer(res, 400, { __type: 'SerializationException', message: error.message });
      answer(res, 500, { __type: 'InternalFailure', message: (error as Error).message });
    }
  };

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    executions: () => [...executions.values()],
    stop: async () => {
      for (const abort of running.values()) abort.abort();
      await Promise.allSettled([...executions.values()].map((e) => e.done));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
