/**
 * A small interpreter of the Amazon States Language subset the stack uses, for the rehearsal's
 * state machines (state-machines.ts).
 *
 *   runExecution(definition, input, context, options) -> Promise<ExecutionResult>
 *
 * States: Pass, Wait (Seconds, SecondsPath, Timestamp, TimestampPath), Choice (asl-paths.ts),
 * Task on Lambda (Resource `arn:aws:states:::lambda:invoke` with Parameters, or a function's ARN
 * itself), Succeed, Fail. Input and output processing: InputPath, Parameters, ResultSelector,
 * ResultPath, OutputPath. Errors: Retry (ErrorEquals, IntervalSeconds, MaxAttempts, BackoffRate,
 * MaxDelaySeconds, JitterStrategy), Catch, States.ALL / States.TaskFailed / States.Timeout, task
 * and machine TimeoutSeconds. Every invocation is first authorized for the machine's role
 * (lambda:InvokeFunction on the function's ARN); a refusal fails the task with the error AWS gives
 * it (Lambda.AWSLambdaException, an AccessDeniedException). Function failures become the errors
 * Step Functions reports: the function's errorType (Unhandled), Sandbox.Timedout,
 * Lambda.TooManyRequestsException (throttled). Waits and retry intervals run on real timers,
 * multiplied by `timeScale`.
 */
import { randomUUID } from 'node:crypto';
import { choiceMatches, placeResult, readPath, resolveTemplate, selectPath, StatesError } from './asl-paths.js';
import type { Authorizer, Invoker } from './types.js';
import { FunctionError } from './types.js';

type State = Record<string, unknown>;
export interface Definition {
  StartAt: string;
  States: Record<string, State>;
  TimeoutSeconds?: number;
}

export interface ExecutionContext {
  executionArn: string;
  name: string;
  stateMachineArn: string;
  stateMachineName: string;
  roleArn: string;
  startTime: Date;
}

export interface RunOptions {
  invoker: Invoker;
  authorizer: Authorizer;
  /** Multiplies waits, retry intervals and timeouts. @default 1 */
  timeScale?: number;
  /** Aborted by StopExecution. */
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export type ExecutionResult =
  | { status: 'SUCCEEDED'; output: unknown }
  | { status: 'FAILED' | 'TIMED_OUT' | 'ABORTED'; error: string; cause: string };

export const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';

/** Whether an ErrorEquals list names the error (States.TaskFailed: any but States.Timeout). */
function names(list: unknown, error: string): boolean {
  const errors = Array.isArray(list) ? list.map(String) : [];
  if (errors.includes(error)) return true;
  if (error === 'States.Runtime' || error === 'States.DataLimitExceeded') return false;
  if (errors.includes('States.ALL')) return true;
  return errors.includes('States.TaskFailed') && error !== 'States.Timeout';
}

/** What Step Functions calls a failed Lambda invocation. */
function taskError(error: unknown): StatesError {
  if (error instanceof StatesError) return error;
  if (error instanceof FunctionError) {
    const cause = JSON.stringify({ errorType: error.errorType, errorMessage: error.message });
    if (error.kind === 'TimedOut') return new StatesError('Sandbox.Timedout', cause);
    if (error.kind === 'Throttled') return new StatesError('Lambda.TooManyRequestsException', error.message);
    return new StatesError(error.errorType, cause);
  }
  return new StatesError('Lambda.ServiceException', error instanceof Error ? error.message : String(error));
}

export async function runExecution(
  definition: Definition,
  input: unknown,
  execution: ExecutionContext,
  options: RunOptions,
): Promise<ExecutionResult> {
  const scale = options.timeScale ?? 1;
  const log = options.log ?? ((line: string) => console.error(line));
  const stop = new AbortController();
  const outer = options.signal;
  const onAbort = () => stop.abort(new StatesError('States.Aborted', 'StopExecution'));
  outer?.addEventListener('abort', onAbort, { once: true });
  if (outer?.aborted) onAbort();
  const machineTimeout = definition.TimeoutSeconds
    ? setTimeout(
        () => stop.abort(new StatesError('States.Timeout', `the execution ran past ${definition.TimeoutSeconds} s`)),
        definition.TimeoutSeconds * 1000 * scale,
      )
    : undefined;

  /** Resolves after `ms`, or rejects with the execution's end (stop, timeout). */
  const wait = (ms: number) =>
    new Promise<void>((resolve, reject) => {
      if (stop.signal.aborted) return reject(stop.signal.reason as Error);
      const timer = setTimeout(
        () => {
          stop.signal.removeEventListener('abort', ended);
          resolve();
        },
        Math.max(0, ms),
      );
      function ended() {
        clearTimeout(timer);
        reject(stop.signal.reason as Error);
      }
      stop.signal.addEventListener('abort', ended, { once: true });
    });
  /** `work`, unless the execution ends first (or `timeoutMs` passes: States.Timeout). */
  const bounded = async <T>(work: Promise<T>, timeoutMs?: number): Promise<T> => {
    work.catch(() => {}); // settled later or never read: the race below has the answer
    let timer: NodeJS.Timeout | undefined;
    let ended = () => {};
    const limit = new Promise<never>((_resolve, reject) => {
      ended = () => reject(stop.signal.reason as Error);
      if (stop.signal.aborted) return ended();
      stop.signal.addEventListener('abort', ended, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(
          () => reject(new StatesError('States.Timeout', 'the task ran past its TimeoutSeconds')),
          timeoutMs,
        );
      }
    });
    try {
      return await Promise.race([work, limit]);
    } finally {
      clearTimeout(timer);
      stop.signal.removeEventListener('abort', ended);
    }
  };

  const invokeLambda = async (functionName: string, payload: unknown): Promise<unknown> => {
    const fn = options.invoker.find(functionName);
    if (!fn) throw new StatesError('Lambda.ResourceNotFoundException', `Function not found: ${functionName}`);
    const allowed = await options.authorizer.authorize(execution.roleArn, 'lambda:InvokeFunction', fn.arn);
    if (!allowed.allowed) {
      log(`rehearsal: state machine ${execution.stateMachineName} may not invoke ${fn.name}: ${allowed.message}`);
      throw new StatesError(
        'Lambda.AWSLambdaException',
        `User: ${execution.roleArn} is not authorized to perform: lambda:InvokeFunction on resource: ${fn.arn} ` +
          '(Service: Lambda, Status Code: 403, Error Code: AccessDeniedException)',
      );
    }
    return options.invoker.invoke(fn.key, payload);
  };

  const runTask = async (state: State, effective: unknown): Promise<unknown> => {
    const timeoutMs = typeof state.TimeoutSeconds === 'number' ? state.TimeoutSeconds * 1000 * scale : undefined;
    if (state.Resource === LAMBDA_INVOKE) {
      const params = (effective ?? {}) as Record<string, unknown>;
      const requestId = randomUUID();
      const payload = 'Payload' in params ? params.Payload : {};
      const result = await bounded(invokeLambda(String(params.FunctionName), payload), timeoutMs);
      return {
        ExecutedVersion: '$LATEST',
        Payload: result ?? null,
        SdkHttpMetadata: { HttpStatusCode: 200 },
        SdkResponseMetadata: { RequestId: requestId },
        StatusCode: 200,
      };
    }
    return bounded(invokeLambda(String(state.Resource), effective), timeoutMs);
  };

  let name = definition.StartAt;
  let data: unknown = input;
  const context = (stateName: string, retryCount: number) => ({
    Execution: {
      Id: execution.executionArn,
      Name: execution.name,
      Input: input,
      StartTime: execution.startTime.toISOString(),
      RoleArn: execution.roleArn,
    },
    State: { Name: stateName, EnteredTime: new Date().toISOString(), RetryCount: retryCount },
    StateMachine: { Id: execution.stateMachineArn, Name: execution.stateMachineName },
  });

  try {
    for (;;) {
      const state = definition.States[name];
      if (!state) throw new StatesError('States.Runtime', `no state ${name}`);
      const ctx = context(name, 0);
      const effective = () => selectPath(state.InputPath, data, ctx);
      let next = state.Next as string | undefined;
      let end = state.End === true;
      switch (state.Type) {
        case 'Pass': {
          const parameters =
            state.Parameters === undefined ? effective() : resolveTemplate(state.Parameters, effective(), ctx);
          const result = 'Result' in state ? state.Result : parameters;
          data = selectPath(state.OutputPath, placeResult(state.ResultPath, data, result), ctx);
          break;
        }
        case 'Wait': {
          const input = effective();
          const seconds =
            typeof state.Seconds === 'number'
              ? state.Seconds
              : state.SecondsPath !== undefined
                ? Number(readPath(String(state.SecondsPath), input, ctx))
                : (Date.parse(String(state.Timestamp ?? readPath(String(state.TimestampPath), input, ctx))) -
                    Date.now()) /
                  1000;
          if (!Number.isFinite(seconds))
            throw new StatesError('States.Runtime', `state ${name}: the wait is not a number`);
          await wait(seconds * 1000 * scale);
          data = selectPath(state.OutputPath, input, ctx);
          break;
        }
        case 'Choice': {
          const input = effective();
          const choice = (state.Choices as Record<string, unknown>[]).find((c) => choiceMatches(c, input, ctx));
          next = (choice?.Next ?? state.Default) as string | undefined;
          if (!next) throw new StatesError('States.NoChoiceMatched', `state ${name}: no choice matched`);
          data = selectPath(state.OutputPath, input, ctx);
          break;
        }
        case 'Succeed':
          return { status: 'SUCCEEDED', output: selectPath(state.OutputPath, effective(), ctx) };
        case 'Fail': {
          const error = state.ErrorPath ? readPath(String(state.ErrorPath), data, ctx) : state.Error;
          const cause = state.CausePath ? readPath(String(state.CausePath), data, ctx) : state.Cause;
          return { status: 'FAILED', error: String(error ?? 'States.Fail'), cause: String(cause ?? '') };
        }
        case 'Task': {
          const attempts = new Map<number, number>();
          for (;;) {
            try {
              const ctxNow = context(
                name,
                [...attempts.values()].reduce((a, b) => a + b, 0),
              );
              const input = selectPath(state.InputPath, data, ctxNow);
              const parameters =
                state.Parameters === undefined ? input : resolveTemplate(state.Parameters, input, ctxNow);
              const raw = await runTask(state, parameters);
              const selected =
                state.ResultSelector === undefined ? raw : resolveTemplate(state.ResultSelector, raw, ctxNow);
              data = selectPath(state.OutputPath, placeResult(state.ResultPath, data, selected), ctxNow);
              break;
            } catch (thrown) {
              if (stop.signal.aborted) throw stop.signal.reason as Error;
              const error = taskError(thrown);
              const retriers = (state.Retry ?? []) as Record<string, unknown>[];
              const index = retriers.findIndex((r) => names(r.ErrorEquals, error.error));
              const retrier = retriers[index];
              const done = attempts.get(index) ?? 0;
              if (retrier && done < Number(retrier.MaxAttempts ?? 3)) {
                attempts.set(index, done + 1);
                const base = Number(retrier.IntervalSeconds ?? 1) * Number(retrier.BackoffRate ?? 2) ** done;
                const capped =
                  retrier.MaxDelaySeconds !== undefined ? Math.min(base, Number(retrier.MaxDelaySeconds)) : base;
                const delay = retrier.JitterStrategy === 'FULL' ? Math.random() * capped : capped;
                await wait(delay * 1000 * scale);
                continue;
              }
              const catcher = ((state.Catch ?? []) as Record<string, unknown>[]).find((c) =>
                names(c.ErrorEquals, error.error),
              );
              if (!catcher) throw error;
              data = placeResult(catcher.ResultPath, data, { Error: error.error, Cause: error.cause });
              next = String(catcher.Next);
              end = false;
              break;
            }
          }
          break;
        }
        default:
          throw new StatesError('States.Runtime', `state ${name}: type ${String(state.Type)} is not rehearsed`);
      }
      if (end) return { status: 'SUCCEEDED', output: data };
      if (!next) throw new StatesError('States.Runtime', `state ${name} has neither Next nor End`);
      name = next;
    }
  } catch (thrown) {
    const error = thrown instanceof StatesError ? thrown : new StatesError('States.Runtime', String(thrown));
    if (error.error === 'States.Aborted') return { status: 'ABORTED', error: error.error, cause: error.cause };
    const timedOut = error.error === 'States.Timeout' && stop.signal.aborted;
    return { status: timedOut ? 'TIMED_OUT' : 'FAILED', error: error.error, cause: error.cause };
  } finally {
    clearTimeout(machineTimeout);
    outer?.removeEventListener('abort', onAbort);
  }
}
