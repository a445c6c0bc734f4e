/**
 * A stream mapping's settings as the pollers use them (stream-mappings.ts): the checks Lambda
 * makes of them when the mapping is created, and the invocation record it sends to an OnFailure
 * destination for records it passes by (the shape of Lambda's documentation: requestContext,
 * responseContext, version, timestamp, DDBStreamBatchInfo).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { compileFilters } from './event-filter.js';
import { isObject, reportsItemFailures } from './mapping-support.js';
import type { RehearsalQueue } from './queues.js';
import type { AssemblyResource, FunctionSpec } from './types.js';

export interface StreamPlan {
  resource: AssemblyResource;
  fn: FunctionSpec;
  sourceArn: string;
  localStreamArn: string;
  start: 'TRIM_HORIZON' | 'LATEST';
  batchSize: number;
  windowMs: number;
  maxRetries: number;
  maxAgeMs: number;
  bisect: boolean;
  partial: boolean;
  destination?: RehearsalQueue | undefined;
  matches: (record: unknown) => boolean;
}

const num = (v: unknown, fallback: number): number => (v === undefined || v === null ? fallback : Number(v));
const isoSeconds = (epochSeconds: number | undefined) =>
  new Date(Math.floor((epochSeconds ?? Date.now() / 1000) * 1000)).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The settings Lambda would refuse, or the plan (its stream and destination still to be found). */
export function streamSettings(
  resource: AssemblyResource,
  queues: readonly RehearsalQueue[],
): Omit<StreamPlan, 'fn' | 'localStreamArn'> | string[] {
  const p = resource.properties;
  const problems: string[] = [];
  const start = p.StartingPosition;
  if (start !== 'TRIM_HORIZON' && start !== 'LATEST')
    problems.push(`StartingPosition ${String(start)} (TRIM_HORIZON or LATEST)`);
  const batchSize = num(p.BatchSize, 100);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
    problems.push(`BatchSize ${batchSize} is out of 1-10000`);
  const window = num(p.MaximumBatchingWindowInSeconds, 0);
  if (!(window >= 0 && window <= 300)) problems.push(`MaximumBatchingWindowInSeconds ${window} is out of 0-300`);
  const maxRetries = num(p.MaximumRetryAttempts, -1);
  if (!Number.isInteger(maxRetries) || maxRetries < -1 || maxRetries > 10_000)
    problems.push(`MaximumRetryAttempts ${maxRetries}`);
  const maxAge = num(p.MaximumRecordAgeInSeconds, -1);
  if (maxAge !== -1 && !(maxAge >= 60 && maxAge <= 604_800)) problems.push(`MaximumRecordAgeInSeconds ${maxAge}`);
  if (num(p.ParallelizationFactor, 1) !== 1) problems.push('ParallelizationFactor above 1 is not rehearsed');
  if (p.TumblingWindowInSeconds !== undefined) problems.push('TumblingWindowInSeconds is not rehearsed');
  const onFailure =
    isObject(p.DestinationConfig) && isObject(p.DestinationConfig.OnFailure)
      ? p.DestinationConfig.OnFailure.Destination
      : undefined;
  const destination = typeof onFailure === 'string' ? queues.find((q) => q.arn === onFailure) : undefined;
  if (onFailure !== undefined && !destination)
    problems.push(`OnFailure destination ${String(onFailure)} is not a queue of the assembly`);
  if (destination?.fifo)
    problems.push(`OnFailure destination ${destination.name} is a FIFO queue (Lambda takes a standard one)`);
  let matches: (record: unknown) => boolean = () => true;
  try {
    matches = compileFilters(p.FilterCriteria);
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (problems.length > 0) return problems;
  return {
    resource,
    sourceArn: String(p.EventSourceArn),
    start: start as StreamPlan['start'],
    batchSize,
    windowMs: window * 1000,
    maxRetries,
    maxAgeMs: maxAge === -1 ? Infinity : maxAge * 1000,
    bisect: p.BisectBatchOnFunctionError === true || p.BisectBatchOnFunctionError === 'true',
    partial: reportsItemFailures(p),
    destination,
    matches,
  };
}

/** What Lambda sends to the OnFailure destination for records it passes by. */
export function failureRecord(
  plan: StreamPlan,
  shardId: string,
  batch: readonly DynamoDBRecord[],
  context: { requestId: string; invokes: number; condition: string; functionError?: string | undefined },
): Record<string, unknown> {
  const first = batch[0]!.dynamodb!;
  const last = batch[batch.length - 1]!.dynamodb!;
  return {
    requestContext: {
      requestId: context.requestId,
      functionArn: plan.fn.arn,
      condition: context.condition,
      approximateInvokeCount: context.invokes,
    },
    responseContext: {
      statusCode: 200,
      executedVersion: '$LATEST',
      ...(context.functionError ? { functionError: context.functionError } : {}),
    },
    version: '1.0',
    timestamp: new Date().toISOString(),
    DDBStreamBatchInfo: {
      shardId,
      startSequenceNumber: first.SequenceNumber,
      endSequenceNumber: last.SequenceNumber,
      approximateArrivalOfFirstRecord: isoSeconds(first.ApproximateCreationDateTime),
      approximateArrivalOfLastRecord: isoSeconds(last.ApproximateCreationDateTime),
      batchSize: batch.length,
      streamArn: plan.sourceArn,
    },
  };
}
