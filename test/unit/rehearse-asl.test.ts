/**
 * The rehearsal's state machine interpreter (local/rehearse/asl.ts, asl-paths.ts) with a fake
 * function host: the stack's own stream-timeout machine looping until its task says done, its
 * retriers, the machine role's lambda:InvokeFunction check, the data flow of a lambda:invoke task
 * (Parameters, ResultSelector, ResultPath, OutputPath), Catch, Choice operators, Fail, the
 * machine's TimeoutSeconds, and definitions asl-validator or the interpreter refuse.
 */
import { describe, expect, it } from '@jest/globals';
import { runExecution } from '../../local/rehearse/asl.js';
import type { Definition, ExecutionContext } from '../../local/rehearse/asl.js';
import { validateDefinition } from '../../local/rehearse/state-machines.js';
import { FakeAuthorizer, FakeInvoker, fakeFunction } from '../support/rehearse-fakes.js';

const expire = fakeFunction('ExpireStream');
const ROLE = 'arn:aws:iam::000000000000:role/StateMachineRole';

/** The synthesized stream-timeout definition (cdk.out), its function ARN resolved. */
const STACK_DEFINITION = JSON.stringify({
  StartAt: 'WaitForIdleTimeout',
  States: {
    WaitForIdleTimeout: { Type: 'Wait', SecondsPath: '$.waitSeconds', Next: 'ExpireIfIdle' },
    ExpireIfIdle: {
      Next: 'IsStreamOver',
      Retry: [
        {
          ErrorEquals: [
            'Lambda.ServiceException',
            'Lambda.AWSLambdaException',
            'Lambda.SdkClientException',
            'Lambda.TooManyRequestsException',
            'Lambda.ClientExecutionTimeoutException',
          ],
          IntervalSeconds: 2,
          MaxAttempts: 6,
          BackoffRate: 2,
          MaxDelaySeconds: 60,
          JitterStrategy: 'FULL',
        },
        {
          ErrorEquals: ['States.TaskFailed'],
          IntervalSeconds: 5,
          MaxAttempts: 3,
          BackoffRate: 2,
          JitterStrategy: 'FULL',
        },
      ],
      Type: 'Task',
      Resource: expire.arn,
    },
    IsStreamOver: {
      Type: 'Choice',
      Choices: [{ Variable: '$.done', BooleanEquals: true, Next: 'StreamOver' }],
      Default: 'WaitForIdleTimeout',
    },
    StreamOver: { Type: 'Succeed' },
  },
  TimeoutSeconds: 86400,
  Comment: 'Cancels an abandoned message stream',
});

const execution: ExecutionContext = {
  executionArn: 'arn:aws:states:us-east-1:000000000000:execution:Timeouts:m1',
  name: 'm1',
  stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:Timeouts',
  stateMachineName: 'Timeouts',
  roleArn: ROLE,
  startTime: new Date(),
};
const allowed = () => new FakeAuthorizer().grant(ROLE, ['lambda:InvokeFunction'], expire.arn);
const run = (
  definition: Definition | string,
  input: unknown,
  invoker: FakeInvoker,
  authorizer = allowed(),
  timeScale = 0.001,
) =>
  runExecution(typeof definition === 'string' ? validateDefinition(definition) : definition, input, execution, {
    invoker,
    authorizer,
    timeScale,
    log: () => {},
  });

describe('the stack state machine', () => {
  it('waits, runs its task and loops until the task says the stream is over', async () => {
    const invoker = new FakeInvoker();
    let runs = 0;
    const fn = invoker.add(expire, async (event: { messageId: string }) => ({
      messageId: event.messageId,
      done: ++runs === 3,
      waitSeconds: 15,
    }));
    const started = Date.now();
    const result = await run(STACK_DEFINITION, { messageId: 'm1', waitSeconds: 60 }, invoker);
    expect(result).toEqual({ status: 'SUCCEEDED', output: { messageId: 'm1', done: true, waitSeconds: 15 } });
    expect(fn.calls).toEqual([
      { messageId: 'm1', waitSeconds: 60 },
      { messageId: 'm1', done: false, waitSeconds: 15 },
      { messageId: 'm1', done: false, waitSeconds: 15 },
    ]);
    // 60 + 15 + 15 seconds at a thousandth.
    expect(Date.now() - started).toBeGreaterThanOrEqual(85);
  });

  it('retries a failing task (States.TaskFailed) and then fails with the function error', async () => {
    const invoker = new FakeInvoker();
    const fn = invoker.add(expire, async () => {
      throw new TypeError('broken');
    });
    const result = await run(STACK_DEFINITION, { messageId: 'm1', waitSeconds: 1 }, invoker);
    expect(result).toMatchObject({ status: 'FAILED', error: 'TypeError' });
    expect(JSON.parse((result as { cause: string }).cause)).toEqual({ errorType: 'TypeError', errorMessage: 'broken' });
    expect(fn.calls).toHaveLength(4);
  });

  it('recovers when a retry succeeds', async () => {
    const invoker = new FakeInvoker();
    let runs = 0;
    invoker.add(expire, async () => {
      if (++runs < 3) throw new Error('flaky');
      return { done: true };
    });
    expect(await run(STACK_DEFINITION, { waitSeconds: 0 }, invoker)).toEqual({
      status: 'SUCCEEDED',
      output: { done: true },
    });
  });

  it('fails as AWS would when its role may not invoke the function, after the Lambda retrier', async () => {
    const invoker = new FakeInvoker();
    const fn = invoker.add(expire, async () => ({ done: true }));
    const result = await run(STACK_DEFINITION, { waitSeconds: 0 }, invoker, new FakeAuthorizer());
    expect(result).toMatchObject({ status: 'FAILED', error: 'Lambda.AWSLambdaException' });
    expect((result as { cause: string }).cause).toMatch(
      /not authorized to perform: lambda:InvokeFunction on resource: .*ExpireStream.*AccessDeniedException/,
    );
    expect(fn.calls).toEqual([]);
  });

  it('times out at the machine TimeoutSeconds', async () => {
    const invoker = new FakeInvoker();
    invoker.add(expire, async () => ({ done: false, waitSeconds: 30 }));
    const definition = { ...(JSON.parse(STACK_DEFINITION) as Definition), TimeoutSeconds: 50 };
    expect(await run(definition, { waitSeconds: 30 }, invoker)).toMatchObject({
      status: 'TIMED_OUT',
      error: 'States.Timeout',
    });
  });
});

describe('data flow and states', () => {
  const definition = (states: Record<string, unknown>, startAt = Object.keys(states)[0]!) =>
    JSON.stringify({ StartAt: startAt, States: states });

  it('lambda:invoke with Parameters, ResultSelector, ResultPath and OutputPath', async () => {
    const invoker = new FakeInvoker();
    const fn = invoker.add(expire, async (event: { id: string; exec: string }) => ({
      seen: event.id,
      exec: event.exec,
    }));
    const text = definition({
      Invoke: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        InputPath: '$.request',
        Parameters: { FunctionName: expire.arn, 'Payload.$': '$', Other: 1 },
        ResultSelector: { 'body.$': '$.Payload', 'code.$': '$.StatusCode' },
        ResultPath: '$.result',
        OutputPath: '$.result',
        End: true,
      },
    });
    const result = await run(text, { request: { id: 'r1', 'exec.$': 'ignored', exec: 'x' } }, invoker);
    expect(result).toEqual({ status: 'SUCCEEDED', output: { body: { seen: 'r1', exec: 'x' }, code: 200 } });
    expect(fn.calls).toEqual([{ id: 'r1', 'exec.$': 'ignored', exec: 'x' }]);
  });

  it('Catch puts the error at its ResultPath and goes on; Fail ends with its error', async () => {
    const invoker = new FakeInvoker();
    invoker.add(expire, async () => {
      throw new RangeError('too far');
    });
    const text = definition({
      Try: {
        Type: 'Task',
        Resource: expire.arn,
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'Check' }],
        End: true,
      },
      Check: {
        Type: 'Choice',
        Choices: [
          {
            And: [
              { Variable: '$.caught.Error', StringEquals: 'RangeError' },
              { Not: { Variable: '$.n', NumericGreaterThan: 5 } },
            ],
            Next: 'Failed',
          },
        ],
        Default: 'Done',
      },
      Failed: { Type: 'Fail', Error: 'Custom.Failure', Cause: 'caught it' },
      Done: { Type: 'Succeed' },
    });
    expect(await run(text, { n: 5 }, invoker)).toEqual({
      status: 'FAILED',
      error: 'Custom.Failure',
      cause: 'caught it',
    });
    expect(await run(text, { n: 6 }, invoker)).toMatchObject({
      status: 'SUCCEEDED',
      output: { n: 6, caught: { Error: 'RangeError' } },
    });
  });

  it('Choice operators, Pass with Result and the context object, Wait until a timestamp', async () => {
    const text = definition({
      Pick: {
        Type: 'Choice',
        Choices: [
          {
            Or: [
              { Variable: '$.missing', IsPresent: true },
              { Variable: '$.name', StringMatches: 'log-*.txt' },
            ],
            Next: 'Named',
          },
          { Variable: '$.a', NumericLessThanEqualsPath: '$.b', Next: 'Less' },
        ],
      },
      Named: { Type: 'Pass', Parameters: { 'execution.$': '$$.Execution.Name', 'name.$': '$.name' }, End: true },
      Less: { Type: 'Wait', Timestamp: new Date(Date.now() + 5).toISOString(), Next: 'Constant' },
      Constant: { Type: 'Pass', Result: { fixed: true }, ResultPath: '$.r', End: true },
    });
    const invoker = new FakeInvoker();
    expect(await run(text, { name: 'log-1.txt' }, invoker)).toEqual({
      status: 'SUCCEEDED',
      output: { execution: 'm1', name: 'log-1.txt' },
    });
    expect(await run(text, { name: 'x', a: 1, b: 1 }, invoker)).toEqual({
      status: 'SUCCEEDED',
      output: { name: 'x', a: 1, b: 1, r: { fixed: true } },
    });
    expect(await run(text, { name: 'x', a: 2, b: 1 }, invoker)).toMatchObject({
      status: 'FAILED',
      error: 'States.NoChoiceMatched',
    });
  });
});

describe('definitions refused', () => {
  it('by asl-validator: a transition to a missing state', () => {
    const text = JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Nowhere' } } });
    expect(() => validateDefinition(text)).toThrow(/invalid Amazon States Language/);
  });

  it('by the interpreter: a Map state and a non-Lambda task', () => {
    const text = JSON.stringify({
      StartAt: 'A',
      States: {
        A: {
          Type: 'Task',
          Resource: 'arn:aws:states:::sqs:sendMessage',
          Parameters: { QueueUrl: 'q', MessageBody: 'b' },
          Next: 'B',
        },
        B: { Type: 'Parallel', Branches: [{ StartAt: 'C', States: { C: { Type: 'Succeed' } } }], End: true },
      },
    });
    expect(() => validateDefinition(text)).toThrow(
      /not rehearsed: state A: resource arn:aws:states:::sqs:sendMessage .*state B: type Parallel/,
    );
  });
});
