/**
 * The rehearsal's Step Functions endpoint (local/rehearse/state-machines.ts) through the SDK the
 * functions bundle (@aws-sdk/client-sfn): StartExecution returns the execution, a second start
 * with the same name and input answers the running one, other input or a closed execution is
 * ExecutionAlreadyExists, DescribeExecution reports the outcome, StopExecution aborts, and an
 * unknown machine or a bad name is refused as AWS refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  InvalidName,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { startStateMachines } from '../../../local/rehearse/state-machines.js';
import { FakeAuthorizer, FakeInvoker, fakeFunction } from '../../support/rehearse-fakes.js';
import { eventually } from '../../support/wait.js';

const expire = fakeFunction('ExpireStream');
const ROLE = 'arn:aws:iam::000000000000:role/TimeoutsRole';
const MACHINE = 'arn:aws:states:us-east-1:000000000000:stateMachine:Timeouts';
const definition = JSON.stringify({
  StartAt: 'Wait',
  States: {
    Wait: { Type: 'Wait', SecondsPath: '$.waitSeconds', Next: 'Expire' },
    Expire: { Type: 'Task', Resource: expire.arn, End: true },
  },
});

let machines: Awaited<ReturnType<typeof startStateMachines>>;
let sfn: SFNClient;
const invoker = new FakeInvoker();
const fn = invoker.add(expire, async (event: { messageId: string }) => ({ messageId: event.messageId, done: true }));

beforeAll(async () => {
  machines = await startStateMachines({
    machines: [{ logicalId: 'Timeouts', name: 'Timeouts', arn: MACHINE, roleArn: ROLE, definition }],
    invoker,
    authorizer: new FakeAuthorizer().grant(ROLE, ['lambda:InvokeFunction'], expire.arn),
    timeScale: 0.01,
  });
  sfn = new SFNClient({
    endpoint: machines.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });
});
afterAll(async () => {
  sfn.destroy();
  await machines.stop();
});

const start = (name: string, input: object) =>
  sfn.send(new StartExecutionCommand({ stateMachineArn: MACHINE, name, input: JSON.stringify(input) }));
const describeExecution = (executionArn: string) => sfn.send(new DescribeExecutionCommand({ executionArn }));

describe('the Step Functions endpoint', () => {
  it('starts an execution by name; the same name and input while it runs answers the same execution', async () => {
    const first = await start('msg-1', { messageId: 'msg-1', waitSeconds: 50 });
    expect(first.executionArn).toBe('arn:aws:states:us-east-1:000000000000:execution:Timeouts:msg-1');
    expect(first.startDate).toBeInstanceOf(Date);
    const again = await start('msg-1', { messageId: 'msg-1', waitSeconds: 50 });
    expect(again).toMatchObject({ executionArn: first.executionArn, startDate: first.startDate });
    await expect(start('msg-1', { messageId: 'msg-1', waitSeconds: 1 })).rejects.toBeInstanceOf(ExecutionAlreadyExists);
    expect((await describeExecution(first.executionArn!)).status).toBe('RUNNING');
    const done = await eventually(
      () => describeExecution(first.executionArn!),
      (d) => d.status !== 'RUNNING',
      { what: 'the end' },
    );
    expect(done).toMatchObject({ status: 'SUCCEEDED', name: 'msg-1', stateMachineArn: MACHINE });
    expect(JSON.parse(done.output!)).toEqual({ messageId: 'msg-1', done: true });
    expect(fn.calls).toEqual([{ messageId: 'msg-1', waitSeconds: 50 }]);
    // Closed, the name stays taken, whatever the input.
    await expect(start('msg-1', { messageId: 'msg-1', waitSeconds: 50 })).rejects.toBeInstanceOf(
      ExecutionAlreadyExists,
    );
  });

  it('stops a running execution', async () => {
    const { executionArn } = await start('msg-2', { messageId: 'msg-2', waitSeconds: 3600 });
    const stopped = await sfn.send(new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: 'test' }));
    expect(stopped.stopDate).toBeInstanceOf(Date);
    expect(await describeExecution(executionArn!)).toMatchObject({ status: 'ABORTED', error: 'Cancelled' });
  });

  it('refuses an unknown machine and an invalid name', async () => {
    await expect(
      sfn.send(new StartExecutionCommand({ stateMachineArn: `${MACHINE}Nope`, input: '{}' })),
    ).rejects.toBeInstanceOf(StateMachineDoesNotExist);
    await expect(start('has space', {})).rejects.toBeInstanceOf(InvalidName);
  });
});
