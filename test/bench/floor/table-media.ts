/** The floor of a media route (bytes in S3, metadata in the table): table.ts + the S3 client. */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import { read } from './table.js';
import type { FloorEvent } from './table.js';

const bucket = new S3Client({});

export const handler = middy<FloorEvent>().handler(async (event: FloorEvent) => {
  const answer = await read(event);
  const object = await bucket.send(new GetObjectCommand({ Bucket: 'floor', Key: answer.body }));
  return { ...answer, headers: { 'content-type': object.ContentType ?? 'application/octet-stream' } };
});
