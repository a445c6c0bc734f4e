/**
 * The assembly's scheduled EventBridge rules, each invoking its Lambda targets as EventBridge does.
 *
 *   parseScheduleExpression('rate(1 minute)') -> { periodMs }          (throws ScheduleExpressionError)
 *   ruleName(stackName, resource) / eventRuleArn(name)                  (for the loader's GetAtt Arn)
 *   startSchedules({ resources, invoker, stackName, ruleArn?, periodScale?, log? })
 *     -> { schedules: ScheduleStatus[]; errors: string[]; stop(): Promise<void> }
 *
 * Every period, each target of an ENABLED rule gets a real-shaped Scheduled Event (or the target's
 * constant `Input`), invoked asynchronously as EventBridge invokes Lambda: a function error is
 * retried as Lambda retries an asynchronous invocation (twice by default, about 1 and 2 minutes
 * later; the function's AWS::Lambda::EventInvokeConfig MaximumRetryAttempts when it has one).
 *
 * EventBridge may invoke a function only when the function's resource policy lets it: here, an
 * AWS::Lambda::Permission for events.amazonaws.com naming the function, with no SourceArn or
 * this rule's. A target without one is reported ("EventBridge may not invoke <fn>") and never
 * invoked, as every invocation would fail on AWS. `cron(...)` expressions are refused (the
 * stack has none); so is any other expression, a non-Lambda target, InputPath and InputTransformer.
 * `periodScale` multiplies every period and retry delay (tests: 0.001 runs a minute in 60 ms).
 */
import { randomUUID } from 'node:crypto';
import { describeFailure, isObject, where } from './mapping-support.js';
import { nestedStackName } from './queues.js';
import type { AssemblyResource, FunctionSpec, Invoker } from './types.js';
import { REHEARSAL_ACCOUNT, REHEARSAL_REGION } from './types.js';

export class ScheduleExpressionError extends Error {}

const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** A rate expression's period; EventBridge's rules: a positive whole value, singular unit iff 1. */
export function parseScheduleExpression(expression: string): { periodMs: number } {
  const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (rate) {
    const value = Number(rate[1]);
    const unit = rate[2]!;
    const singular = !unit.endsWith('s');
    if (value < 1) throw new ScheduleExpressionError(`${expression}: the value must be positive`);
    if (singular !== (value === 1)) {
      throw new ScheduleExpressionError(
        `${expression}: the unit is singular for 1 and plural otherwise (EventBridge refuses it)`,
      );
    }
    return { periodMs: value * UNIT_MS[singular ? unit : unit.slice(0, -1)]! };
  }
  if (expression.startsWith('cron(')) {
    throw new ScheduleExpressionError(`${expression}: cron expressions are not rehearsed (only rate(...))`);
  }
  throw new ScheduleExpressionError(`${JSON.stringify(expression)} is not a schedule expression EventBridge accepts`);
}

/** The rule's physical name: its Name, or `<stack name>-<logical id>` (CloudFormation adds a random suffix). */
export function ruleName(stackName: string, resource: Pick<AssemblyResource, 'stack' | 'logicalId' | 'properties'>) {
  const given = resource.properties.Name;
  if (typeof given === 'string' && given !== '') return given;
  const base = `${nestedStackName(stackName, resource.stack)}-${resource.logicalId}`.replace(/[^A-Za-z0-9._-]/g, '-');
  return base.length > 64 ? base.slice(base.length - 64) : base;
}

export const eventRuleArn = (name: string): string =>
  `arn:aws:events:${REHEARSAL_REGION}:${REHEARSAL_ACCOUNT}:rule/${name}`;

export interface ScheduleStatus {
  logicalId: string;
  ruleArn: string;
  expression: string;
  periodMs: number;
  /** The host keys of the targets it invokes. */
  targets: string[];
  running: boolean;
}

export interface ScheduleOptions {
  resources: readonly AssemblyResource[];
  invoker: Invoker;
  /** The root stack's name (rule names derive from it, see ruleName). */
  stackName: string;
  /** The ARN the loader gave the rule (GetAtt Arn); by default eventRuleArn(ruleName(...)). */
  ruleArn?: (rule: AssemblyResource) => string;
  /** @default 1 */
  periodScale?: number;
  log?: (line: string) => void;
}

const actionsOf = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [String(v)]);

/** Whether an AWS::Lambda::Permission lets EventBridge's rule `ruleArn` invoke `fn`. */
function eventBridgeMayInvoke(
  resources: readonly AssemblyResource[],
  invoker: Invoker,
  fn: FunctionSpec,
  ruleArn: string,
) {
  return resources.some((r) => {
    if (r.type !== 'AWS::Lambda::Permission') return false;
    const p = r.properties;
    const action = actionsOf(p.Action).some((a) => a === 'lambda:InvokeFunction' || a === 'lambda:*');
    const names = typeof p.FunctionName === 'string' ? invoker.find(p.FunctionName)?.key === fn.key : false;
    const source = p.SourceArn === undefined || p.SourceArn === ruleArn;
    const account = p.SourceAccount === undefined || p.SourceAccount === REHEARSAL_ACCOUNT;
    return action && names && p.Principal === 'events.amazonaws.com' && source && account;
  });
}

/** The retries Lambda gives a failed asynchronous invocation of `fn`. */
function asyncRetries(resources: readonly AssemblyResource[], invoker: Invoker, fn: FunctionSpec): number {
  const config = resources.find(
    (r) =>
      r.type === 'AWS::Lambda::EventInvokeConfig' &&
      typeof r.properties.FunctionName === 'string' &&
      invoker.find(r.properties.FunctionName)?.key === fn.key,
  );
  const max = config?.properties.MaximumRetryAttempts;
  return max === undefined ? 2 : Number(max);
}

export function startSchedules(options: ScheduleOptions): {
  schedules: ScheduleStatus[];
  errors: string[];
  stop(): Promise<void>;
} {
  const scale = options.periodScale ?? 1;
  const log = options.log ?? ((line: string) => console.error(line));
  const arnOf = options.ruleArn ?? ((r: AssemblyResource) => eventRuleArn(ruleName(options.stackName, r)));
  const schedules: ScheduleStatus[] = [];
  const errors: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  let stopped = false;

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) run();
    }, ms);
    timer.unref();
    timers.add(timer);
  };

  const invoke = (fn: FunctionSpec, event: unknown, retriesLeft: number, attempt = 1) => {
    const run: Promise<void> = options.invoker
      .invoke(fn.key, event)
      .then(
        () => undefined,
        (error: unknown) => {
          if (stopped) return;
          log(`rehearsal: scheduled ${fn.name} failed (attempt ${attempt}): ${describeFailure(error)}`);
          // Lambda's asynchronous retries: about a minute, then two, after the failure.
          if (retriesLeft > 0) later(60_000 * attempt * scale, () => invoke(fn, event, retriesLeft - 1, attempt + 1));
        },
      )
      .finally(() => running.delete(run));
    running.add(run);
  };

  for (const rule of options.resources) {
    if (rule.type !== 'AWS::Events::Rule' || rule.properties.ScheduleExpression === undefined) continue;
    const expression = String(rule.properties.ScheduleExpression);
    const ruleArn = arnOf(rule);
    const status: ScheduleStatus = {
      logicalId: rule.logicalId,
      ruleArn,
      expression,
      periodMs: 0,
      targets: [],
      running: false,
    };
    schedules.push(status);
    try {
      status.periodMs = parseScheduleExpression(expression).periodMs;
    } catch (error) {
      errors.push(`${where(rule)}: ${(error as Error).message}`);
      continue;
    }
    const deliveries: { fn: FunctionSpec; input?: unknown }[] = [];
    for (const target of Array.isArray(rule.properties.Targets) ? rule.properties.Targets : []) {
      const t = isObject(target) ? target : {};
      const fn = typeof t.Arn === 'string' ? options.invoker.find(t.Arn) : undefined;
      const problem = !fn
        ? `target ${String(t.Id)} (${String(t.Arn)}) is not a function of the assembly`
        : t.InputPath !== undefined || t.InputTransformer !== undefined
          ? `target ${String(t.Id)}: InputPath and InputTransformer are not rehearsed`
          : !eventBridgeMayInvoke(options.resources, options.invoker, fn, ruleArn)
            ? `EventBridge may not invoke ${fn.name}: no AWS::Lambda::Permission for events.amazonaws.com from ${ruleArn}`
            : '';
      if (problem || !fn) {
        errors.push(`${where(rule)}: ${problem}`);
        continue;
      }
      deliveries.push({ fn, ...(typeof t.Input === 'string' ? { input: JSON.parse(t.Input) as unknown } : {}) });
      status.targets.push(fn.key);
    }
    if (rule.properties.State === 'DISABLED' || deliveries.length === 0) continue;
    status.running = true;
    const fire = () => {
      const event = {
        version: '0',
        id: randomUUID(),
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: REHEARSAL_ACCOUNT,
        time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: REHEARSAL_REGION,
        resources: [ruleArn],
        detail: {},
      };
      for (const d of deliveries) {
        invoke(d.fn, d.input ?? event, asyncRetries(options.resources, options.invoker, d.fn));
      }
      later(status.periodMs * scale, fire);
    };
    later(status.periodMs * scale, fire);
  }

  return {
    schedules,
    errors,
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
}
