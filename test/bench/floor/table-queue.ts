/** The floor of a route that writes the table and signals a queue (dispatch): table.ts + the SQS client. */
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import { read } from './table.js';
import type { FloorEvent } from './table.js';

const queue = new SQSClient({});

export const handler = middy<FloorEvent>().handler(async (event: FloorEvent) => {
  const answer = await read(event);
  await queue.send(new SendMessageCommand({ QueueUrl: 'floor', MessageBody: answer.body }));
  return answer;
});
