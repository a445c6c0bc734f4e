/**
 * The local S3: a second fauxqs emulator in-process (its S3 side), with the media bucket
 * created as the stack creates it. With a data folder (npm start: DATA_DIR/s3) the objects
 * are kept between runs; without one they live in memory.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdirSync } from 'node:fs';
import { startFauxqs } from 'fauxqs';

export const LOCAL_MEDIA_BUCKET = 'chat-relay-media';

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  stop: () => Promise<void>;
}

export async function startLocalS3(dataDir?: string): Promise<LocalS3> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const server = await startFauxqs({ port: 0, logger: false, ...(dataDir ? { s3StorageDir: dataDir } : {}) });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: LOCAL_MEDIA_BUCKET }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  } finally {
    s3.destroy();
  }
  return { endpoint, bucket: LOCAL_MEDIA_BUCKET, stop: () => server.stop() };
}
