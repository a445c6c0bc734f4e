/**
 * Runs the assembly's functions as Lambda runs them: each execution environment is a worker
 * thread (worker.mjs) that loads the function's bundle from cdk.out with the function's own
 * process.env (its template's variables, plus what Lambda's runtime sets: region, function name,
 * memory, log group, the role's credentials) and takes one invocation at a time. Concurrent
 * invocations get more environments, up to the function's reserved concurrency (beyond it:
 * throttled, as Lambda answers); an idle environment is kept warm for the next one. A function
 * that runs past its timeout has its environment ended (the next invocation starts cold), as
 * Lambda does.
 *
 * The only variables the rehearsal adds beyond Lambda's are the endpoints of the local stand-ins
 * for AWS's network (DYNAMODB_ENDPOINT, SQS_ENDPOINT, S3_ENDPOINT: the IAM gateway) and the
 * deployment inputs a caller gives (`inputs`: the instance configuration, the §12.2 overrides,
 * test knobs); neither may replace a variable the template sets, but INSTANCE_CONFIG, which is a
 * deployment input (the stack's configuration).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FunctionError } from './types.js';
import type { FunctionSpec, Invoker } from './types.js';

export interface StreamSink {
  head(metadata: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] }): void;
  chunk(data: Uint8Array): void;
  end(): void;
}

export interface HostOptions {
  functions: FunctionSpec[];
  /** Per function: the credentials of its role and the stand-ins' endpoints (never a template variable). */
  runtimeEnvironment: (spec: FunctionSpec) => Record<string, string>;
  /** Deployment inputs every function gets (see above). */
  inputs?: Record<string, string>;
  /** Each function's /tmp (and TMPDIR) goes under this folder. */
  tmpRoot: string;
  /** The functions' own output (their log lines): this process's stdout and stderr, or nowhere (tests). */
  output?: 'inherit' | 'discard';
}

/**
 * Environments kept per function at most (without reserved concurrency): Lambda would start more,
 * each a cold start of 0.3–1.5 s of CPU here; beyond it an invocation waits for one to be free.
 * A response-streaming function is exempt (each open stream holds its environment for minutes).
 */
const MAX_ENVIRONMENTS = 12;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  sink?: StreamSink | undefined;
}

interface Environment {
  worker: Worker;
  ready: Promise<void>;
  busy: boolean;
  pending: Map<string, Pending>;
}

/** Deployment inputs that may replace a template variable: the stack's configuration document. */
const REPLACEABLE = new Set(['INSTANCE_CONFIG']);

export class FunctionHost implements Invoker {
  readonly functions: ReadonlyMap<string, FunctionSpec>;
  private readonly byArnOrName = new Map<string, FunctionSpec>();
  private readonly pools = new Map<string, Environment[]>();
  private inputs: Record<string, string>;
  private stopped = false;
  /** Invocations started, by function key (tests check that a suite ran every function). */
  readonly invocations = new Map<string, number>();

  constructor(private readonly options: HostOptions) {
    this.functions = new Map(options.functions.map((f) => [f.key, f]));
    for (const f of options.functions) {
      this.byArnOrName.set(f.arn, f);
      this.byArnOrName.set(f.name, f);
    }
    this.inputs = { ...options.inputs };
  }

  find(arnOrName: string): FunctionSpec | undefined {
    // A qualified ARN (`:$LATEST`, an alias) names the function too.
    return this.byArnOrName.get(arnOrName) ?? this.byArnOrName.get(arnOrName.replace(/:(\$LATEST|[\w-]+)$/, ''));
  }

  /** The environment a function's workers start with. */
  environmentOf(spec: FunctionSpec): Record<string, string> {
    const tmp = join(this.options.tmpRoot, spec.logicalId);
    mkdirSync(tmp, { recursive: true });
    const inputs = Object.fromEntries(
      Object.entries(this.inputs).filter(([name]) => REPLACEABLE.has(name) || !(name in spec.environment)),
    );
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TZ: 'UTC',
      LANG: 'en_US.UTF-8',
      AWS_REGION: 'us-east-1',
      AWS_DEFAULT_REGION: 'us-east-1',
      AWS_EXECUTION_ENV: `AWS_Lambda_${spec.runtime}`,
      AWS_LAMBDA_FUNCTION_NAME: spec.name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${spec.name}`,
      AWS_LAMBDA_LOG_STREAM_NAME: 'rehearsal',
      LAMBDA_TASK_ROOT: spec.codeDir,
      TMPDIR: tmp,
      ...this.options.runtimeEnvironment(spec),
      ...inputs,
      ...spec.environment,
      ...(inputs.INSTANCE_CONFIG !== undefined ? { INSTANCE_CONFIG: inputs.INSTANCE_CONFIG } : {}),
    };
  }

  /**
   * Changes the deployment inputs, as a redeploy with other inputs would: environments running an
   * invocation finish it; every environment then ends, and the next invocation starts with the new ones.
   */
  setInputs(vars: Record<string, string | undefined>): void {
    for (const [name, value] of Object.entries(vars)) {
      if (value === undefined) delete this.inputs[name];
      else this.inputs[name] = value;
    }
    for (const pool of this.pools.values()) {
      for (const environment of [...pool]) this.retire(pool, environment);
    }
  }

  invoke(key: string, event: unknown, options: { requestId?: string } = {}): Promise<unknown> {
    return this.run(key, event, options.requestId ?? randomUUID());
  }

  /** A response-streaming invocation (a function URL in RESPONSE_STREAM mode): the body goes to `sink` as written. */
  invokeStreaming(
    key: string,
    event: unknown,
    sink: StreamSink,
    options: { requestId?: string; signal?: AbortSignal } = {},
  ): Promise<unknown> {
    return this.run(key, event, options.requestId ?? randomUUID(), sink, options.signal);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.pools.values()].flat();
    this.pools.clear();
    await Promise.all(all.map((e) => e.worker.terminate()));
  }

  private spec(key: string): FunctionSpec {
    const spec = this.functions.get(key) ?? this.find(key);
    if (!spec) throw new Error(`No function ${key} in the assembly.`);
    return spec;
  }

  private async run(
    key: string,
    event: unknown,
    requestId: string,
    sink?: StreamSink,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const spec = this.spec(key);
    this.invocations.set(spec.key, (this.invocations.get(spec.key) ?? 0) + 1);
    const environment = await this.take(spec, sink !== undefined);
    const id = randomUUID();
    const timeoutMs = spec.timeoutSeconds * 1000;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => environment.worker.postMessage({ type: 'abort', id });
    try {
      await environment.ready;
      const deadline = Date.now() + timeoutMs;
      return await new Promise<unknown>((resolve, reject) => {
        environment.pending.set(id, { resolve, reject, sink });
        timer = setTimeout(() => {
          // Lambda ends the sandbox of a function past its timeout; the next invocation starts cold.
          environment.pending.delete(id);
          this.discard(spec, environment);
          reject(
            new FunctionError(spec.key, 'TimedOut', `Task timed out after ${spec.timeoutSeconds.toFixed(2)} seconds`),
          );
        }, timeoutMs);
        signal?.addEventListener('abort', onAbort, { once: true });
        environment.worker.postMessage({ type: 'invoke', id, event, requestId, deadline });
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      environment.busy = false;
      if (this.stopped) void environment.worker.terminate();
      this.waiting.get(spec.key)?.shift()?.();
    }
  }

  private readonly waiting = new Map<string, (() => void)[]>();

  /** An idle warm environment, or a new one within the function's concurrency. */
  private async take(spec: FunctionSpec, streaming: boolean): Promise<Environment> {
    if (this.stopped) throw new FunctionError(spec.key, 'Throttled', 'The rehearsal is stopping.');
    const pool = this.pools.get(spec.key) ?? [];
    this.pools.set(spec.key, pool);
    const idle = pool.find((e) => !e.busy);
    if (idle) {
      idle.busy = true;
      return idle;
    }
    if (spec.reservedConcurrency !== undefined && pool.length >= spec.reservedConcurrency) {
      throw new FunctionError(spec.key, 'Throttled', 'Rate Exceeded.', 'TooManyRequestsException');
    }
    if (!streaming && pool.length >= MAX_ENVIRONMENTS) {
      await new Promise<void>((ok) => this.waiting.set(spec.key, [...(this.waiting.get(spec.key) ?? []), ok]));
      return this.take(spec, streaming);
    }
    const environment = this.start(spec, pool);
    environment.busy = true;
    pool.push(environment);
    return environment;
  }

  private start(spec: FunctionSpec, pool: Environment[]): Environment {
    const worker = new Worker(new URL('./worker.mjs', import.meta.url), {
      workerData: {
        codeDir: spec.codeDir,
        handler: spec.handler,
        functionName: spec.name,
        functionArn: spec.arn,
        memoryMb: spec.memoryMb,
      },
      env: this.environmentOf(spec),
      // The function's memory as its heap's ceiling (Lambda's memory setting bounds the whole sandbox).
      resourceLimits: { maxOldGenerationSizeMb: Math.max(64, spec.memoryMb) },
      stdout: this.options.output === 'discard',
      stderr: this.options.output === 'discard',
    });
    if (this.options.output === 'discard') {
      worker.stdout.resume();
      worker.stderr.resume();
    }
    const pending = new Map<string, Pending>();
    let markReady: () => void = () => undefined;
    let failInit: (error: Error) => void = () => undefined;
    const ready = new Promise<void>((ok, fail) => {
      markReady = ok;
      failInit = fail;
    });
    ready.catch(() => undefined);
    const environment: Environment = { worker, ready, busy: false, pending };
    const failAll = (error: FunctionError) => {
      failInit(error);
      for (const p of pending.values()) p.reject(error);
      pending.clear();
      this.discard(spec, environment);
    };
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') return markReady();
      if (message.type === 'init-error')
        return failAll(new FunctionError(spec.key, 'InitError', message.error.errorMessage, message.error.errorType));
      if (message.type === 'crash')
        return failAll(new FunctionError(spec.key, 'Unhandled', message.error.errorMessage, message.error.errorType));
      const p = pending.get(message.id);
      if (!p) return;
      if (message.type === 'head') return p.sink?.head(message.metadata);
      if (message.type === 'chunk') return p.sink?.chunk(message.data);
      if (message.type === 'end') return p.sink?.end();
      pending.delete(message.id);
      if (message.type === 'result') return p.resolve(message.result);
      p.reject(new FunctionError(spec.key, 'Unhandled', message.error.errorMessage, message.error.errorType));
    });
    worker.on('error', (error) => failAll(new FunctionError(spec.key, 'Unhandled', error.message, error.name)));
    worker.on('exit', () => {
      const at = pool.indexOf(environment);
      if (at >= 0) pool.splice(at, 1);
      if (pending.size > 0) failAll(new FunctionError(spec.key, 'Unhandled', 'The execution environment ended.'));
    });
    return environment;
  }

  private discard(spec: FunctionSpec, environment: Environment): void {
    const pool = this.pools.get(spec.key);
    const at = pool?.indexOf(environment) ?? -1;
    if (pool && at >= 0) pool.splice(at, 1);
    void environment.worker.terminate();
  }

  /** Ends an environment once its invocation (if any) is done. */
  private retire(pool: Environment[], environment: Environment): void {
    const at = pool.indexOf(environment);
    if (at >= 0) pool.splice(at, 1);
    if (environment.pending.size === 0) {
      void environment.worker.terminate();
      return;
    }
    const check = setInterval(() => {
      if (environment.pending.size > 0) return;
      clearInterval(check);
      void environment.worker.terminate();
    }, 50);
    check.unref();
  }
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'init-error'; error: { errorType: string; errorMessage: string } }
  | { type: 'crash'; error: { errorType: string; errorMessage: string } }
  | { type: 'head'; id: string; metadata: { statusCode?: number; headers?: Record<string, string> } }
  | { type: 'chunk'; id: string; data: Uint8Array }
  | { type: 'end'; id: string }
  | { type: 'result'; id: string; result: unknown }
  | { type: 'error'; id: string; error: { errorType: string; errorMessage: string } };
