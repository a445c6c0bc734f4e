/**
 * The assembly's SQS queues, created in the fauxqs emulator from their template properties.
 *
 *   queueName(stackName, resource) -> string       the physical name (QueueName, or one made as CloudFormation does)
 *   queueArn(name) -> string                       arn:aws:sqs:<region>:<account>:<name>
 *   createQueues({ endpoint, stackName, resources }) -> Promise<RehearsalQueues>
 *     RehearsalQueues = { queues: RehearsalQueue[]; byArn(arn); byLogicalId(stack, id); stop(): Promise<void> }
 *     RehearsalQueue  = { stack, logicalId, name, url, arn, fifo, visibilityTimeoutSeconds, redrive? }
 *
 * The loader resolves `Ref` (the URL) and `GetAtt Arn/QueueName/QueueUrl` of a queue with
 * `queueName`/`queueArn` before anything exists (names are a function of the stack and the
 * logical id), then calls `createQueues` with the resolved properties: a RedrivePolicy's
 * `deadLetterTargetArn` is then one of these ARNs, and that queue is created first.
 *
 * Redrive: fauxqs 2.4.1 honours RedrivePolicy itself. On a receive, a message whose receive count
 * passes maxReceiveCount is moved to the queue the policy names by ARN (its store resolves
 * `arn:aws:sqs:<region>:000000000000:<name>`, the rehearsal's account), so the pollers need not
 * do it. test/integration/rehearse/queues.test.ts pins that, so an upgrade that drops it is noticed.
 *
 * Names: without QueueName, CloudFormation names a queue `<stack name>-<logical id>-<random>`.
 * Here it is the same without the random suffix, so that a restart with a data folder finds
 * the same queues (and their messages), kept to SQS's 80 characters and alphabet.
 */
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { AssemblyResource } from './types.js';
import { REHEARSAL_ACCOUNT, REHEARSAL_REGION } from './types.js';

export interface RehearsalQueue {
  stack: string;
  logicalId: string;
  name: string;
  url: string;
  arn: string;
  fifo: boolean;
  visibilityTimeoutSeconds: number;
  redrive?: { deadLetterTargetArn: string; maxReceiveCount: number } | undefined;
}

export interface RehearsalQueues {
  queues: RehearsalQueue[];
  byArn(arn: string): RehearsalQueue | undefined;
  byLogicalId(stack: string, logicalId: string): RehearsalQueue | undefined;
  stop(): Promise<void>;
}

const SQS_NAME_MAX = 80;
const FIFO_SUFFIX = '.fifo';

/** The stack name a nested stack's resources are named after (root name + nested ids). */
export const nestedStackName = (rootStackName: string, stack: string): string =>
  stack ? `${rootStackName}-${stack.split('/').join('-')}` : rootStackName;

const truthy = (v: unknown): boolean => v === true || v === 'true';

/** The queue's physical name, as CloudFormation would give it (see the header on the suffix). */
export function queueName(
  stackName: string,
  resource: Pick<AssemblyResource, 'stack' | 'logicalId' | 'properties'>,
): string {
  const given = resource.properties.QueueName;
  if (typeof given === 'string' && given !== '') return given;
  const fifo = truthy(resource.properties.FifoQueue);
  const base = `${nestedStackName(stackName, resource.stack)}-${resource.logicalId}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const room = SQS_NAME_MAX - (fifo ? FIFO_SUFFIX.length : 0);
  // A long name loses the start of its stack part, so the logical id stays readable.
  const cut = base.length > room ? base.slice(base.length - room) : base;
  return fifo ? `${cut}${FIFO_SUFFIX}` : cut;
}

export const queueArn = (name: string): string => `arn:aws:sqs:${REHEARSAL_REGION}:${REHEARSAL_ACCOUNT}:${name}`;

/** Template properties that are queue attributes of the same name (numbers and booleans as strings). */
const ATTRIBUTES = [
  'DelaySeconds',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'VisibilityTimeout',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;

function redrivePolicy(value: unknown, where: string): RehearsalQueue['redrive'] {
  if (value === undefined || value === null) return undefined;
  // CloudFormation takes the policy as an object or as its JSON text.
  const policy = (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
  const target = policy.deadLetterTargetArn;
  const max = Number(policy.maxReceiveCount);
  if (typeof target !== 'string' || !target.startsWith('arn:aws:sqs:')) {
    throw new Error(`${where}: RedrivePolicy.deadLetterTargetArn is not a queue ARN: ${JSON.stringify(target)}`);
  }
  if (!Number.isInteger(max) || max < 1 || max > 1000) {
    throw new Error(`${where}: RedrivePolicy.maxReceiveCount must be 1-1000, not ${String(policy.maxReceiveCount)}`);
  }
  return { deadLetterTargetArn: target, maxReceiveCount: max };
}

/** Dead-letter queues before the queues that name them (a cycle or a missing target throws). */
function inCreationOrder(entries: { arn: string; where: string; redrive: RehearsalQueue['redrive'] }[]): number[] {
  const index = new Map(entries.map((e, i) => [e.arn, i]));
  const order: number[] = [];
  const state = new Map<number, 'visiting' | 'done'>();
  const visit = (i: number) => {
    if (state.get(i) === 'done') return;
    if (state.get(i) === 'visiting') throw new Error(`${entries[i]!.where}: RedrivePolicy forms a cycle`);
    state.set(i, 'visiting');
    const target = entries[i]!.redrive?.deadLetterTargetArn;
    if (target !== undefined) {
      const j = index.get(target);
      if (j === undefined) throw new Error(`${entries[i]!.where}: dead-letter queue ${target} is not in the assembly`);
      visit(j);
    }
    state.set(i, 'done');
    order.push(i);
  };
  entries.forEach((_e, i) => visit(i));
  return order;
}

export async function createQueues(options: {
  /** The fauxqs endpoint (http://127.0.0.1:<port>). */
  endpoint: string;
  /** The root stack's name (`ChatRelay`). */
  stackName: string;
  /** The assembly's resources (only `AWS::SQS::Queue` ones are used), properties resolved. */
  resources: readonly AssemblyResource[];
}): Promise<RehearsalQueues> {
  const sqs = new SQSClient({
    endpoint: options.endpoint,
    region: REHEARSAL_REGION,
    credentials: { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' },
  });
  const defined = options.resources
    .filter((r) => r.type === 'AWS::SQS::Queue')
    .map((resource) => {
      const name = queueName(options.stackName, resource);
      const where = `${resource.path || resource.logicalId} (AWS::SQS::Queue)`;
      const fifo = truthy(resource.properties.FifoQueue);
      if (fifo !== name.endsWith(FIFO_SUFFIX)) {
        throw new Error(`${where}: a FIFO queue's name ends with .fifo, and only a FIFO queue's (${name})`);
      }
      return {
        resource,
        name,
        arn: queueArn(name),
        where,
        fifo,
        redrive: redrivePolicy(resource.properties.RedrivePolicy, where),
      };
    });
  const queues: RehearsalQueue[] = [];
  try {
    for (const i of inCreationOrder(defined)) {
      const { resource, name, arn, where, fifo, redrive } = defined[i]!;
      const target = redrive && defined.find((d) => d.arn === redrive.deadLetterTargetArn);
      // SQS refuses a dead-letter queue of the other kind (FIFO for FIFO, standard for standard).
      if (target && target.fifo !== fifo) {
        throw new Error(
          `${where}: its dead-letter queue ${target.name} must be ${fifo ? 'a FIFO' : 'a standard'} queue`,
        );
      }
      const attributes: Record<string, string> = {};
      for (const key of ATTRIBUTES) {
        const value = resource.properties[key];
        if (value !== undefined && value !== null) attributes[key] = String(value);
      }
      if (fifo) attributes.FifoQueue = 'true';
      if (redrive) attributes.RedrivePolicy = JSON.stringify(redrive);
      const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      if (!out.QueueUrl) throw new Error(`${where}: the emulator returned no queue URL`);
      queues.push({
        stack: resource.stack,
        logicalId: resource.logicalId,
        name,
        url: out.QueueUrl,
        arn,
        fifo,
        visibilityTimeoutSeconds: Number(attributes.VisibilityTimeout ?? 30),
        redrive,
      });
    }
  } finally {
    sqs.destroy();
  }
  return {
    queues,
    byArn: (arn) => queues.find((q) => q.arn === arn),
    byLogicalId: (stack, logicalId) => queues.find((q) => q.stack === stack && q.logicalId === logicalId),
    // The queues live as long as the emulator; nothing of this module's runs after creation.
    stop: async () => {},
  };
}
