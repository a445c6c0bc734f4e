/**
 * What the event source mapping pollers (sqs-mappings.ts, stream-mappings.ts) share: the status
 * each reports to the start-up line, the permission check Lambda makes when a mapping is
 * created or enabled, how a failed invocation is told, and an SQS record as Lambda shapes it.
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import type { AssemblyResource, Authorizer, FunctionSpec, Invoker } from './types.js';
import { FunctionError, REHEARSAL_REGION } from './types.js';
import type { RehearsalQueue } from './queues.js';

/** One mapping as the rehearsal runs it (or refuses to). */
export interface MappingStatus {
  logicalId: string;
  /** The host's key of its function, when found. */
  functionKey?: string | undefined;
  /** The event source's ARN (queue or stream). */
  source: string;
  /** Polling: enabled, its function found and its role allowed. */
  running: boolean;
  /** Why it does not run (each also in the part's `errors`), or '' when disabled on purpose. */
  problems: string[];
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const where = (r: AssemblyResource): string => `${r.path || r.logicalId} (${r.type})`;

/** The mapping's function (FunctionName is a name, an ARN or a partial ARN once resolved). */
export function mappingFunction(invoker: Invoker, resource: AssemblyResource): FunctionSpec | string {
  const name = resource.properties.FunctionName;
  if (typeof name !== 'string') return `${where(resource)}: FunctionName is not resolved (${JSON.stringify(name)})`;
  return invoker.find(name) ?? `${where(resource)}: function ${name} is not in the assembly`;
}

/**
 * Lambda checks the function's execution role when the mapping is created (CreateEventSourceMapping
 * fails, or the mapping is disabled, when one is missing): the list of refusals, empty when all pass.
 */
export async function missingPermissions(
  authorizer: Authorizer,
  fn: FunctionSpec,
  checks: readonly { action: string; resource: string }[],
): Promise<string[]> {
  const refusals: string[] = [];
  for (const { action, resource } of checks) {
    const answer = await authorizer.authorize(fn.roleArn, action, resource);
    if (!answer.allowed) {
      refusals.push(
        `the execution role of ${fn.name} (${fn.roleArn}) may not ${action} on ${resource}: ${answer.message}`,
      );
    }
  }
  return refusals;
}

/** A failed invocation in one line (the error's kind and message, never the event). */
export function describeFailure(error: unknown): string {
  if (error instanceof FunctionError) return `${error.kind} ${error.errorType}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** `ReportBatchItemFailures` among the mapping's FunctionResponseTypes. */
export const reportsItemFailures = (properties: Record<string, unknown>): boolean =>
  Array.isArray(properties.FunctionResponseTypes) &&
  properties.FunctionResponseTypes.includes('ReportBatchItemFailures');

/**
 * The identifiers a partial batch response names, or 'invalid' when Lambda would take the
 * response as a failure of the whole batch (an identifier empty, null or not in the batch).
 * An absent or empty response, or an empty list, is a full success.
 */
export function batchItemFailures(result: unknown, identifiers: ReadonlySet<string>): string[] | 'invalid' {
  if (result === null || result === undefined || !isObject(result)) return [];
  const list = result.batchItemFailures;
  if (list === null || list === undefined) return [];
  if (!Array.isArray(list)) return 'invalid';
  const failed: string[] = [];
  for (const item of list) {
    const id = isObject(item) ? item.itemIdentifier : undefined;
    if (typeof id !== 'string' || id === '' || !identifiers.has(id)) return 'invalid';
    failed.push(id);
  }
  return failed;
}

function messageAttributes(message: Message): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    out[name] = {
      dataType: value.DataType ?? 'String',
      stringValue: value.StringValue,
      binaryValue: value.BinaryValue ? Buffer.from(value.BinaryValue).toString('base64') : undefined,
      stringListValues: [],
      binaryListValues: [],
    };
  }
  return out;
}

/** The record Lambda builds from a received message. */
export function sqsEventRecord(message: Message, queueArn: string): SQSRecord {
  const a = message.Attributes ?? {};
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(a)) if (value !== undefined) attributes[key] = value;
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: attributes as unknown as SQSRecord['attributes'],
    messageAttributes: messageAttributes(message),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: REHEARSAL_REGION,
  };
}

/** What the mappings' inputs have in common (sqs-mappings.ts, stream-mappings.ts). */
export interface MappingInputs {
  /** The assembly's resources (each part uses its kind of `AWS::Lambda::EventSourceMapping`). */
  resources: readonly AssemblyResource[];
  invoker: Invoker;
  authorizer: Authorizer;
  /** The queues created by queues.ts (sources, and failure destinations). */
  queues: readonly RehearsalQueue[];
  /** Where failed invocations are told (one line each). @default console.error */
  log?: (line: string) => void;
}

/** Running mappings: each one's status, the errors that kept some from starting, and their stop. */
export interface RunningMappings {
  mappings: MappingStatus[];
  errors: string[];
  stop(): Promise<void>;
}
