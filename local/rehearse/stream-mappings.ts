/**
 * The assembly's DynamoDB stream event source mappings, polled on DynamoDB Local as Lambda polls
 * a table's stream.
 *
 *   startStreamMappings({ resources, invoker, authorizer, queues, dynamodbEndpoint, sqsEndpoint,
 *                         pollMs?, retryDelayMs?, log? })
 *     -> Promise<{ mappings: MappingStatus[]; errors: string[]; stop(): Promise<void> }>
 *
 * Per mapping and shard (a child shard after its parent, as Lambda keeps their order): read from
 * StartingPosition (TRIM_HORIZON, or LATEST for the shards open at start; shards found later from
 * their start), drop the records FilterCriteria rejects, gather up to BatchSize records for at most
 * MaximumBatchingWindowInSeconds, and invoke the function with a real-shaped DynamoDBStreamEvent
 * (eventSourceARN: the mapping's EventSourceArn). The shard waits while a batch fails, as on AWS
 * (stream-delivery.ts, which the local runtime's stream consumers use too):
 * - ReportBatchItemFailures: a partial response retries from the first failed record (an invalid
 *   one fails the whole batch);
 * - a function error retries the batch, or with BisectBatchOnFunctionError splits it in two and
 *   retries each half (a split does not consume the retry quota);
 * - after MaximumRetryAttempts retries (default: until the record expires) or past
 *   MaximumRecordAgeInSeconds, the records are passed by, and with an OnFailure destination an
 *   invocation record describing them (DDBStreamBatchInfo, as Lambda sends) goes to that queue;
 * - a throttled invocation is retried without counting.
 *
 * Not started (an entry of `errors`): the role missing dynamodb:DescribeStream, GetRecords or
 * GetShardIterator on the stream, ListStreams (which takes no resource, so '*'), or
 * sqs:SendMessage on the failure destination; a table without a stream; an invalid setting or
 * filter pattern. `Enabled: false` is honoured quietly. Lambda polls each shard four times a
 * second (its documentation); `pollMs` defaults to that.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { StreamsApi, StreamsApiError } from './dynamodb-streams.js';
import type { RawStreamRecord, Shard } from './dynamodb-streams.js';
import { describeFailure, mappingFunction, missingPermissions, sleep, where } from './mapping-support.js';
import type { MappingInputs, MappingStatus, RunningMappings } from './mapping-support.js';
import { deliverBatch } from './stream-delivery.js';
import { failureRecord, streamSettings } from './stream-plan.js';
import type { StreamPlan } from './stream-plan.js';
import { FunctionError, REHEARSAL_REGION } from './types.js';

/** Only DynamoDB-stream mappings are used; OnFailure destinations name one of `queues`. */
export interface StreamMappingOptions extends MappingInputs {
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** Between two reads of a shard. @default 250 */
  pollMs?: number;
  /** Before a failed batch is retried. @default 1000 */
  retryDelayMs?: number;
}

export type StreamMappings = RunningMappings;

interface ShardState {
  shard: Shard;
  start: 'TRIM_HORIZON' | 'LATEST';
  iterator?: string | undefined;
  /** The last sequence number read (to ask again after an expired iterator). */
  lastRead?: string | undefined;
  closed: boolean;
  done: boolean;
  buffer: DynamoDBRecord[];
  firstBufferedAt: number;
}

export async function startStreamMappings(options: StreamMappingOptions): Promise<StreamMappings> {
  const api = new StreamsApi(options.dynamodbEndpoint);
  const sqs = new SQSClient({
    endpoint: options.sqsEndpoint,
    region: REHEARSAL_REGION,
    credentials: { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' },
  });
  const pollMs = options.pollMs ?? 250;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  const log = options.log ?? ((line: string) => console.error(line));
  const mappings: MappingStatus[] = [];
  const errors: string[] = [];
  const plans: StreamPlan[] = [];
  for (const resource of options.resources) {
    if (resource.type !== 'AWS::Lambda::EventSourceMapping') continue;
    const source = String(resource.properties.EventSourceArn ?? '');
    const table = /^arn:aws:dynamodb:[^:]*:[^:]*:table\/([^/]+)\/stream\//.exec(source)?.[1];
    if (!table) continue;
    const status: MappingStatus = { logicalId: resource.logicalId, source, running: false, problems: [] };
    mappings.push(status);
    const fn = mappingFunction(options.invoker, resource);
    const planned = streamSettings(resource, options.queues);
    if (typeof fn === 'string') status.problems.push(fn);
    else status.functionKey = fn.key;
    if (Array.isArray(planned)) status.problems.push(...planned.map((m) => `${where(resource)}: ${m}`));
    const localStreamArn = await api
      .latestStreamArn(table)
      .catch((e: Error) => void status.problems.push(`${where(resource)}: table ${table}: ${e.message}`));
    if (localStreamArn === undefined && status.problems.length === 0)
      status.problems.push(`${where(resource)}: table ${table} has no stream`);
    if (typeof fn !== 'string') {
      const checks = [
        ...['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'].map((action) => ({
          action,
          resource: source,
        })),
        { action: 'dynamodb:ListStreams', resource: '*' },
        ...(!Array.isArray(planned) && planned.destination
          ? [{ action: 'sqs:SendMessage', resource: planned.destination.arn }]
          : []),
      ];
      status.problems.push(
        ...(await missingPermissions(options.authorizer, fn, checks)).map((m) => `${where(resource)}: ${m}`),
      );
    }
    errors.push(...status.problems);
    if (status.problems.length > 0 || typeof fn === 'string' || Array.isArray(planned) || !localStreamArn) continue;
    if (resource.properties.Enabled === false || resource.properties.Enabled === 'false') continue;
    status.running = true;
    plans.push({ ...planned, fn, localStreamArn });
  }

  const stopping = new AbortController();
  const stopped = () => stopping.signal.aborted;

  const eventRecord = (raw: RawStreamRecord, plan: StreamPlan): DynamoDBRecord =>
    ({ ...raw, awsRegion: REHEARSAL_REGION, eventSourceARN: plan.sourceArn }) as DynamoDBRecord;

  async function sendFailure(
    plan: StreamPlan,
    state: ShardState,
    batch: DynamoDBRecord[],
    context: { requestId: string; invokes: number; condition: string; functionError?: string | undefined },
  ) {
    const first = batch[0]!.dynamodb!;
    const last = batch[batch.length - 1]!.dynamodb!;
    const what = `${batch.length} record(s) of ${plan.sourceArn} (${first.SequenceNumber}..${last.SequenceNumber}) for ${plan.fn.name}: ${context.condition}`;
    if (!plan.destination) return log(`rehearsal: passed by ${what}`);
    const body = failureRecord(plan, state.shard.ShardId, batch, context);
    await sqs.send(new SendMessageCommand({ QueueUrl: plan.destination.url, MessageBody: JSON.stringify(body) }));
    log(`rehearsal: sent to ${plan.destination.name}: ${what}`);
  }

  /** One batch until it succeeds, is split, or is given up (Lambda's stream error handling: stream-delivery.ts). */
  const deliver = (plan: StreamPlan, state: ShardState, batch: DynamoDBRecord[]): Promise<void> =>
    deliverBatch(batch, {
      partial: plan.partial,
      bisect: plan.bisect,
      maxRetries: plan.maxRetries,
      maxAgeMs: plan.maxAgeMs,
      retryDelayMs,
      signal: stopping.signal,
      invoke: (event, requestId) => options.invoker.invoke(plan.fn.key, event, { requestId }),
      throttled: (error) => error instanceof FunctionError && error.kind === 'Throttled',
      failed: (records, error) =>
        log(
          `rehearsal: ${plan.fn.name} failed on ${records.length} record(s) of ${plan.sourceArn}: ${describeFailure(error)}`,
        ),
      giveUp: (records, context) => sendFailure(plan, state, records, context),
    });

  /** Reads one shard once, and delivers what is due. */
  async function pump(plan: StreamPlan, state: ShardState): Promise<void> {
    if (!state.closed) {
      if (!state.iterator) {
        // After an expired iterator, on from the last record read; else from the shard's start position.
        state.iterator = state.lastRead
          ? await api.iterator(plan.localStreamArn, state.shard.ShardId, 'AFTER_SEQUENCE_NUMBER', state.lastRead)
          : await api.iterator(plan.localStreamArn, state.shard.ShardId, state.start);
      }
      try {
        const { records, next } = await api.records(state.iterator);
        state.iterator = next;
        if (!next) state.closed = true;
        for (const raw of records) {
          state.lastRead = raw.dynamodb.SequenceNumber;
          const record = eventRecord(raw, plan);
          if (!plan.matches(record)) continue;
          if (state.buffer.length === 0) state.firstBufferedAt = Date.now();
          state.buffer.push(record);
        }
      } catch (error) {
        if (!(error instanceof StreamsApiError && error.code === 'ExpiredIteratorException')) throw error;
        state.iterator = undefined;
        return;
      }
    }
    while (state.buffer.length > 0 && !stopped()) {
      const due =
        state.buffer.length >= plan.batchSize || state.closed || Date.now() - state.firstBufferedAt >= plan.windowMs;
      if (!due) return;
      const batch = state.buffer.splice(0, plan.batchSize);
      state.firstBufferedAt = Date.now();
      await deliver(plan, state, batch);
    }
    if (state.closed && state.buffer.length === 0) state.done = true;
  }

  async function poll(plan: StreamPlan): Promise<void> {
    const shards = new Map<string, ShardState>();
    let first = true;
    let lastListed = 0;
    while (!stopped()) {
      try {
        if (first || Date.now() - lastListed > 10_000 || [...shards.values()].some((s) => s.done)) {
          for (const shard of await api.shards(plan.localStreamArn)) {
            if (shards.has(shard.ShardId)) continue;
            // The shards there at start begin at StartingPosition (LATEST passes the closed ones
            // by); shards found later, from their start.
            const open = !shard.SequenceNumberRange?.EndingSequenceNumber;
            const start = first ? plan.start : 'TRIM_HORIZON';
            const skip = first && plan.start === 'LATEST' && !open;
            const state: ShardState = { shard, start, closed: skip, done: skip, buffer: [], firstBufferedAt: 0 };
            shards.set(shard.ShardId, state);
          }
          first = false;
          lastListed = Date.now();
        }
        for (const state of shards.values()) {
          const parent = state.shard.ParentShardId ? shards.get(state.shard.ParentShardId) : undefined;
          if (state.done || (parent && !parent.done)) continue;
          await pump(plan, state);
        }
      } catch (error) {
        if (stopped()) break;
        log(`rehearsal: ${where(plan.resource)}: reading ${plan.sourceArn}: ${describeFailure(error)}`);
      }
      await sleep(pollMs, stopping.signal);
    }
  }

  const pollers = plans.map((plan) => poll(plan));
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
