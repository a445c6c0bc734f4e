/**
 * The rehearsal's schedules (local/rehearse/schedules.ts): the rate expressions EventBridge
 * accepts and refuses, and rules invoking their targets with a Scheduled Event, only where a
 * Lambda permission lets EventBridge do it, with Lambda's asynchronous retries. Periods are
 * scaled down (a minute in 60 ms) so the test sees several.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { eventRuleArn, parseScheduleExpression, ruleName, startSchedules } from '../../local/rehearse/schedules.js';
import type { AssemblyResource } from '../../local/rehearse/types.js';
import { FakeInvoker, fakeFunction } from '../support/rehearse-fakes.js';
import { eventually } from '../support/wait.js';

describe('schedule expressions', () => {
  it.each([
    ['rate(1 minute)', 60_000],
    ['rate(5 minutes)', 300_000],
    ['rate(1 hour)', 3_600_000],
    ['rate(12 hours)', 43_200_000],
    ['rate(1 day)', 86_400_000],
    ['rate(7 days)', 604_800_000],
  ])('%s', (expression, periodMs) => {
    expect(parseScheduleExpression(expression)).toEqual({ periodMs });
  });

  it.each([
    ['rate(1 minutes)', /singular for 1/],
    ['rate(5 minute)', /singular for 1/],
    ['rate(0 minutes)', /positive/],
    ['rate(1 second)', /not a schedule expression/],
    ['rate(1.5 hours)', /not a schedule expression/],
    ['every minute', /not a schedule expression/],
    ['cron(0 12 * * ? *)', /cron expressions are not rehearsed/],
  ])('refuses %s', (expression, message) => {
    expect(() => parseScheduleExpression(expression)).toThrow(message);
  });
});

const sweep = fakeFunction('DispatchSweep');
const rule = (logicalId: string, properties: Record<string, unknown>): AssemblyResource => ({
  stack: '',
  logicalId,
  type: 'AWS::Events::Rule',
  path: `ChatRelay/${logicalId}`,
  properties: {
    ScheduleExpression: 'rate(1 minute)',
    State: 'ENABLED',
    Targets: [{ Arn: sweep.arn, Id: 'Target0' }],
    ...properties,
  },
});
const ruleArnOf = (logicalId: string) => eventRuleArn(ruleName('ChatRelay', { stack: '', logicalId, properties: {} }));
const permission = (logicalId: string, sourceArn?: string): AssemblyResource => ({
  stack: '',
  logicalId: `Allow${logicalId}`,
  type: 'AWS::Lambda::Permission',
  path: `ChatRelay/Allow${logicalId}`,
  properties: {
    Action: 'lambda:InvokeFunction',
    FunctionName: sweep.arn,
    Principal: 'events.amazonaws.com',
    ...(sourceArn ? { SourceArn: sourceArn } : {}),
  },
});

describe('scheduled rules', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((s) => s()));
  });

  it('invokes a permitted target every period with a Scheduled Event naming the rule', async () => {
    const invoker = new FakeInvoker();
    const fn = invoker.add(sweep, async () => undefined);
    const started = startSchedules({
      resources: [rule('SweepSchedule', {}), permission('Sweep', ruleArnOf('SweepSchedule'))],
      invoker,
      stackName: 'ChatRelay',
      periodScale: 0.001,
    });
    stops.push(started.stop);
    expect(started.errors).toEqual([]);
    expect(started.schedules).toEqual([
      expect.objectContaining({
        ruleArn: 'arn:aws:events:us-east-1:000000000000:rule/ChatRelay-SweepSchedule',
        periodMs: 60_000,
        running: true,
      }),
    ]);
    await eventually(
      () => fn.calls.length,
      (n) => n >= 3,
      { what: 'three periods' },
    );
    expect(fn.calls[0]).toEqual({
      version: '0',
      id: expect.any(String),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      region: 'us-east-1',
      resources: ['arn:aws:events:us-east-1:000000000000:rule/ChatRelay-SweepSchedule'],
      detail: {},
    });
  });

  it('reports and never invokes a target whose permission names another rule, or that has none', async () => {
    const invoker = new FakeInvoker();
    const fn = invoker.add(sweep, async () => undefined);
    const started = startSchedules({
      resources: [rule('SweepSchedule', {}), permission('Sweep', ruleArnOf('OtherRule'))],
      invoker,
      stackName: 'ChatRelay',
      periodScale: 0.001,
    });
    stops.push(started.stop);
    expect(started.errors).toEqual([
      expect.stringContaining(
        'EventBridge may not invoke DispatchSweep: no AWS::Lambda::Permission for events.amazonaws.com',
      ),
    ]);
    expect(started.schedules[0]!.running).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(fn.calls).toEqual([]);
  });

  it('retries a failed invocation twice, as Lambda retries an asynchronous one; a disabled rule never fires', async () => {
    const invoker = new FakeInvoker();
    const failing = invoker.add(sweep, async () => {
      throw new Error('nope');
    });
    const logged: string[] = [];
    const started = startSchedules({
      resources: [
        rule('SweepSchedule', { ScheduleExpression: 'rate(1 day)' }),
        rule('Disabled', { State: 'DISABLED' }),
        permission('Sweep'),
      ],
      invoker,
      stackName: 'ChatRelay',
      // A day in 864 ms: its first firing, then the retries (a minute, then two) within 2 ms.
      periodScale: 0.00001,
      log: (line) => logged.push(line),
    });
    stops.push(started.stop);
    expect(started.schedules.map((s) => s.running)).toEqual([true, false]);
    await eventually(
      () => logged.filter((l) => l.includes('(attempt 3)')),
      (l) => l.length >= 1,
      { what: 'a third attempt' },
    );
    // The same event three times: the retries of one firing, not three firings.
    const firstFiring = failing.calls.slice(0, 3) as { id: string }[];
    expect(firstFiring).toHaveLength(3);
    expect(new Set(firstFiring.map((e) => e.id)).size).toBe(1);
  });
});
