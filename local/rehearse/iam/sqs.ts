/**
 * An SQS request in the AWS JSON 1.0 protocol the SDK speaks (`X-Amz-Target: AmazonSQS.<Op>`) as
 * IAM's check: the batch operations are authorized as their single forms (SendMessageBatch as
 * sqs:SendMessage, and so on), every other operation as `sqs:<Op>`, on the queue's ARN
 * (`arn:aws:sqs:<region>:<account>:<name>`, the name being the QueueUrl's last segment or the
 * QueueName given); ListQueues on `*`.
 */
import { text } from './types.js';
import type { Body, Check } from './types.js';
import type { Place } from './dynamodb.js';

export const SQS_TARGET = 'AmazonSQS.';

const SINGLE: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

export const queueArn = (place: Place, name: string): string => `arn:aws:sqs:${place.region}:${place.account}:${name}`;

/** The queue's name in a queue URL (its last path segment). */
export function queueNameOf(queueUrl: string): string | undefined {
  try {
    const segments = new URL(queueUrl).pathname.split('/').filter(Boolean);
    return segments.at(-1);
  } catch {
    return undefined;
  }
}

export function sqsChecks(place: Place, target: string, body: Body): Check[] {
  const operation = target.slice(SQS_TARGET.length);
  const action = `sqs:${SINGLE[operation] ?? operation}`;
  const url = text(body.QueueUrl);
  const name = url !== undefined ? queueNameOf(url) : text(body.QueueName);
  return [{ action, resource: name ? queueArn(place, name) : '*' }];
}
