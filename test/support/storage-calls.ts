/**
 * Watches the DynamoDB (and SQS) calls the API makes, on the sources and on the rehearsal alike, for a test
 * that checks which path a request took (a kind of call happened, or how many): on the sources, a
 * middleware on the document client the handlers share with this process; on the rehearsal, the
 * calls its IAM gateway let through (the deployment's functions, as CloudTrail's data events
 * record them). Each call is told once answered: `operation` is the API's name
 * (`TransactWriteItems`); `input` is the request as sent, whose key names and shape
 * (`TransactItems[0].Delete`) are the same in both, its values plain on the sources and DynamoDB
 * JSON on the rehearsal; `error` is the failed call's error name (`TransactionCanceledException`).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { ddb } from '../../functions/store/db.js';
import type { Rehearsal } from '../../local/rehearse/rehearsal.js';
import type { TestApi } from './api.js';

export interface StorageCall {
  operation: string;
  input: Record<string, unknown>;
  error?: string;
}

/** Calls `listener` for each DynamoDB call until the returned function is called. */
export function watchStorageCalls(api: TestApi, listener: (call: StorageCall) => void): () => void {
  const rehearsal = (api as TestApi & { rehearsal?: Rehearsal }).rehearsal;
  if (rehearsal) {
    return rehearsal.onCall((call) => {
      if (call.service !== 'dynamodb') return;
      listener({ operation: call.operation, input: call.input, ...(call.errorType ? { error: call.errorType } : {}) });
    });
  }
  const name = `watch-storage-calls-${Math.random().toString(36).slice(2)}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const call = { operation: (context.commandName ?? '').replace(/Command$/, ''), input: args.input as never };
      try {
        const out = await next(args);
        listener(call);
        return out;
      } catch (error) {
        listener({ ...call, error: (error as Error).name });
        throw error;
      }
    },
    { step: 'initialize', name },
  );
  return () => ddb().middlewareStack.remove(name);
}

/**
 * The same for the SQS calls (`ReceiveMessage`, `SendMessage`…): on the sources, every SQS
 * client's send in this process (the handlers' and the local runtime's own pollers'); on the
 * rehearsal, the functions' calls its IAM gateway let through (the mappings' pollers are Lambda's,
 * not the functions'). `input` is the request's fields (`QueueUrl`, `WaitTimeSeconds`).
 */
export function watchQueueCalls(api: TestApi, listener: (call: QueueCall) => void): () => void {
  const rehearsal = (api as TestApi & { rehearsal?: Rehearsal }).rehearsal;
  if (rehearsal) {
    return rehearsal.onCall((call) => {
      if (call.service === 'sqs') listener({ operation: call.operation, input: call.input });
    });
  }
  const send = SQSClient.prototype.send;
  SQSClient.prototype.send = function (this: SQSClient, ...args: unknown[]) {
    const command = args[0] as { constructor: { name: string }; input: Record<string, unknown> };
    listener({ operation: command.constructor.name.replace(/Command$/, ''), input: command.input });
    return (send as (...a: unknown[]) => unknown).apply(this, args);
  } as never;
  return () => {
    SQSClient.prototype.send = send;
  };
}

export interface QueueCall {
  operation: string;
  input: Record<string, unknown>;
}
