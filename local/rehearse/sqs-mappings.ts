/**
 * The assembly's SQS event source mappings, polled as Lambda's SQS poller does.
 *
 *   startSqsMappings({ resources, invoker, authorizer, queues, endpoint, waitSeconds?, maxConcurrency?, log? })
 *     -> Promise<{ mappings: MappingStatus[]; errors: string[]; stop(): Promise<void> }>
 *
 * Per mapping: long-poll ReceiveMessage (up to BatchSize, gathering for MaximumBatchingWindowInSeconds
 * when it is set), drop (delete) the messages FilterCriteria rejects, invoke the function with a
 * real-shaped SQSEvent, then delete what succeeded: everything, or with ReportBatchItemFailures
 * everything not named in `batchItemFailures`; nothing on a function error (the messages come back
 * after the visibility timeout, and the queue's RedrivePolicy dead-letters them, see queues.ts).
 * At most min(reserved concurrency, ScalingConfig.MaximumConcurrency, maxConcurrency) batches are
 * in flight.
 *
 * Not started (an entry of `errors`, which the start-up prints): what would make
 * CreateEventSourceMapping fail or leave the mapping disabled on AWS: the function's role missing
 * sqs:ReceiveMessage, sqs:DeleteMessage or sqs:GetQueueAttributes on the queue; a queue whose
 * visibility timeout is shorter than the function's timeout; a BatchSize over 10 without a
 * batching window (or over 10 on a FIFO queue); an invalid filter pattern. `Enabled: false` is
 * honoured quietly.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { compileFilters, sqsFilterView } from './event-filter.js';
import {
  batchItemFailures,
  describeFailure,
  isObject,
  mappingFunction,
  missingPermissions,
  reportsItemFailures,
  sleep,
  sqsEventRecord,
  where,
} from './mapping-support.js';
import type { MappingInputs, MappingStatus, RunningMappings } from './mapping-support.js';
import type { RehearsalQueue } from './queues.js';
import type { AssemblyResource, FunctionSpec } from './types.js';
import { REHEARSAL_REGION } from './types.js';

/** Only SQS-sourced mappings are used; the mapping's EventSourceArn names one of `queues`. */
export interface SqsMappingOptions extends MappingInputs {
  /** The fauxqs endpoint. */
  endpoint: string;
  /** Each ReceiveMessage's long poll (Lambda's is 20 s; shorter here so stop() is quick). @default 1 */
  waitSeconds?: number;
  /** Batches in flight per mapping when nothing lower applies (Lambda scales further). @default 10 */
  maxConcurrency?: number;
}

export type SqsMappings = RunningMappings;

/** Lambda's own permissions on the queue, checked on the function's role. */
const POLLER_ACTIONS = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'] as const;

interface Plan {
  resource: AssemblyResource;
  fn: FunctionSpec;
  queue: RehearsalQueue;
  batchSize: number;
  windowMs: number;
  concurrency: number;
  partial: boolean;
  matches: (record: unknown) => boolean;
}

/** The mapping's problems Lambda would refuse it for (besides permissions), or its plan. */
function plan(
  resource: AssemblyResource,
  fn: FunctionSpec,
  queue: RehearsalQueue,
  maxConcurrency: number,
): Plan | string[] {
  const p = resource.properties;
  const problems: string[] = [];
  const batchSize = p.BatchSize === undefined ? 10 : Number(p.BatchSize);
  const window = p.MaximumBatchingWindowInSeconds === undefined ? 0 : Number(p.MaximumBatchingWindowInSeconds);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > (queue.fifo ? 10 : 10_000)) {
    problems.push(`BatchSize ${String(p.BatchSize)} is out of range for ${queue.fifo ? 'a FIFO' : 'a standard'} queue`);
  } else if (batchSize > 10 && !(window > 0)) {
    problems.push(`BatchSize ${batchSize} over 10 needs a MaximumBatchingWindowInSeconds of at least 1`);
  }
  if (!(window >= 0 && window <= 300)) problems.push(`MaximumBatchingWindowInSeconds ${window} is out of 0-300`);
  if (queue.visibilityTimeoutSeconds < fn.timeoutSeconds) {
    problems.push(
      `queue ${queue.name}'s visibility timeout (${queue.visibilityTimeoutSeconds} s) is shorter than ` +
        `${fn.name}'s timeout (${fn.timeoutSeconds} s)`,
    );
  }
  let matches: (record: unknown) => boolean = () => true;
  try {
    matches = compileFilters(p.FilterCriteria);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const scaling = isObject(p.ScalingConfig) ? Number(p.ScalingConfig.MaximumConcurrency) : NaN;
  const concurrency = Math.min(
    maxConcurrency,
    fn.reservedConcurrency ?? Infinity,
    Number.isFinite(scaling) ? scaling : Infinity,
  );
  if (concurrency < 1) problems.push(`${fn.name} has a reserved concurrency of 0: Lambda never invokes it`);
  if (problems.length > 0) return problems;
  return {
    resource,
    fn,
    queue,
    batchSize,
    windowMs: window * 1000,
    concurrency,
    partial: reportsItemFailures(p),
    matches,
  };
}

export async function startSqsMappings(options: SqsMappingOptions): Promise<SqsMappings> {
  const waitSeconds = options.waitSeconds ?? 1;
  const log = options.log ?? ((line: string) => console.error(line));
  const sqs = new SQSClient({
    endpoint: options.endpoint,
    region: REHEARSAL_REGION,
    credentials: { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' },
  });
  const mappings: MappingStatus[] = [];
  const errors: string[] = [];
  const plans: Plan[] = [];
  for (const resource of options.resources) {
    if (resource.type !== 'AWS::Lambda::EventSourceMapping') continue;
    const source = String(resource.properties.EventSourceArn ?? '');
    if (!source.startsWith('arn:aws:sqs:')) continue;
    const status: MappingStatus = { logicalId: resource.logicalId, source, running: false, problems: [] };
    mappings.push(status);
    const fn = mappingFunction(options.invoker, resource);
    const queue = options.queues.find((q) => q.arn === source);
    if (typeof fn === 'string') status.problems.push(fn);
    else status.functionKey = fn.key;
    if (!queue) status.problems.push(`${where(resource)}: queue ${source} is not in the assembly`);
    if (typeof fn !== 'string' && queue) {
      const planned = plan(resource, fn, queue, options.maxConcurrency ?? 10);
      const refused = await missingPermissions(
        options.authorizer,
        fn,
        POLLER_ACTIONS.map((action) => ({ action, resource: queue.arn })),
      );
      if (Array.isArray(planned)) status.problems.push(...planned.map((m) => `${where(resource)}: ${m}`));
      status.problems.push(...refused.map((m) => `${where(resource)}: ${m}`));
      if (status.problems.length === 0 && !Array.isArray(planned)) {
        if (resource.properties.Enabled === false || resource.properties.Enabled === 'false') continue;
        status.running = true;
        plans.push(planned);
      }
    }
    errors.push(...status.problems);
  }

  const stopping = new AbortController();
  const pollers = plans.map((p) => poll(p));

  async function receive(p: Plan, max: number): Promise<Message[]> {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: p.queue.url,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    return out.Messages ?? [];
  }

  async function remove(p: Plan, messages: readonly Message[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      const chunk = messages.slice(i, i + 10);
      const out = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: p.queue.url,
          Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
      for (const failed of out.Failed ?? []) {
        log(`rehearsal: ${p.queue.name}: a message was not deleted: ${failed.Code} ${failed.Message ?? ''}`);
      }
    }
  }

  /** One batch: a first receive, then more within the batching window until BatchSize. */
  async function collect(p: Plan): Promise<Message[]> {
    const batch = await receive(p, p.batchSize);
    if (batch.length === 0 || p.windowMs === 0) return batch;
    const deadline = Date.now() + p.windowMs;
    while (batch.length < p.batchSize && Date.now() < deadline && !stopping.signal.aborted) {
      batch.push(...(await receive(p, p.batchSize - batch.length)));
    }
    return batch;
  }

  async function deliver(p: Plan, messages: Message[]): Promise<void> {
    const records = messages.map((m) => sqsEventRecord(m, p.queue.arn));
    const kept = records.filter((r) => p.matches(sqsFilterView(r as unknown as { body: string })));
    // Lambda deletes the messages its filters drop.
    const dropped = messages.filter((m) => !kept.some((r) => r.messageId === m.MessageId));
    if (dropped.length > 0) await remove(p, dropped);
    if (kept.length === 0) return;
    const event: SQSEvent = { Records: kept };
    let result: unknown;
    try {
      result = await options.invoker.invoke(p.fn.key, event);
    } catch (error) {
      log(`rehearsal: ${p.fn.name} failed on ${kept.length} message(s) of ${p.queue.name}: ${describeFailure(error)}`);
      return;
    }
    let done = kept;
    if (p.partial) {
      const failed = batchItemFailures(result, new Set(kept.map((r) => r.messageId)));
      if (failed === 'invalid') {
        log(`rehearsal: ${p.fn.name} returned an invalid batchItemFailures for ${p.queue.name}: the whole batch fails`);
        return;
      }
      done = kept.filter((r) => !failed.includes(r.messageId));
    }
    const ids = new Set(done.map((r) => r.messageId));
    await remove(
      p,
      messages.filter((m) => ids.has(m.MessageId!)),
    );
  }

  async function poll(p: Plan): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (!stopping.signal.aborted) {
      if (inFlight.size >= p.concurrency) {
        await Promise.race(inFlight);
        continue;
      }
      try {
        const messages = await collect(p);
        if (messages.length === 0) continue;
        const run: Promise<void> = deliver(p, messages)
          .catch((error: unknown) => log(`rehearsal: ${where(p.resource)}: ${describeFailure(error)}`))
          .finally(() => inFlight.delete(run));
        inFlight.add(run);
      } catch (error) {
        if (stopping.signal.aborted) break;
        log(`rehearsal: ${where(p.resource)}: polling ${p.queue.name}: ${describeFailure(error)}`);
        await sleep(1000, stopping.signal);
      }
    }
    await Promise.allSettled([...inFlight]);
  }

  return {
    mappings,
    errors,
    stop: async () => {
      stopping.abort();
      await Promise.allSettled(pollers);
      sqs.destroy();
    },
  };
}
