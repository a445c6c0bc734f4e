/**
 * The local S3 with the rehearsal's access hook (local/s3-access.ts, gateway.s3Hook()): each
 * request is verified with its signer's own secret and authorized as that signer, against the
 * synthesized role of the files route (GetObject and ListBucket on uploads/ only) and a role
 * written here. A presigned URL or form upload is authorized as the principal that signed it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { startIamGateway } from '../../../local/rehearse/iam/gateway.js';
import type { IamGateway } from '../../../local/rehearse/iam/gateway.js';
import type { RehearsalPrincipal } from '../../../local/rehearse/iam/types.js';
import { LOCAL_S3_CREDENTIALS, startLocalS3 } from '../../../local/s3.js';
import { ACCOUNT, REGION, allow, policy, principal, synthesizedPolicy } from '../../support/rehearse-iam.js';

const BUCKET = 'chat-relay-media';
const reader = principal('FilesGet', synthesizedPolicy('filesGet', { table: 't' }));
const uploader = principal('Uploader', policy(allow(['s3:PutObject'], [`arn:aws:s3:::${BUCKET}/uploads/*`])));
const key = `uploads/${randomUUID()}.txt`;

let gateway: IamGateway;
let local: Awaited<ReturnType<typeof startLocalS3>>;
const clients: S3Client[] = [];

function clientOf(p: Pick<RehearsalPrincipal, 'accessKeyId' | 'secretAccessKey'>): S3Client {
  const client = new S3Client({
    endpoint: local.endpoint,
    forcePathStyle: true,
    region: REGION,
    credentials: { accessKeyId: p.accessKeyId, secretAccessKey: p.secretAccessKey },
    maxAttempts: 1,
  });
  clients.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  if (!error) throw new Error('expected the request to be refused, and it passed');
  return error;
}

const xmlCode = (text: string) => /<Code>(\w+)<\/Code>/.exec(text)?.[1];

beforeAll(async () => {
  gateway = await startIamGateway({
    account: ACCOUNT,
    region: REGION,
    principals: [reader, uploader],
    upstream: { dynamodb: 'http://127.0.0.1:9', sqs: 'http://127.0.0.1:9' },
  });
  local = await startLocalS3(undefined, gateway.s3Hook(LOCAL_S3_CREDENTIALS));
  await clientOf(LOCAL_S3_CREDENTIALS).send(
    new PutObjectCommand({ Bucket: BUCKET, Key: 'pending/p.txt', Body: 'pending' }),
  );
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await local?.stop();
  await gateway?.stop();
});

describe('the local S3 with the rehearsal’s access hook', () => {
  it('lets each principal do what its role allows, signed with its own keys', async () => {
    await clientOf(uploader).send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'hello' }));
    const got = await clientOf(reader).send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(await got.Body!.transformToString()).toBe('hello');
    const listed = await clientOf(reader).send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'uploads/' }));
    expect(listed.Contents?.map((c) => c.Key)).toContain(key);
  });

  it('refuses a principal without s3:GetObject with 403 AccessDenied and IAM’s sentence', async () => {
    const error = await failure(clientOf(uploader).send(new GetObjectCommand({ Bucket: BUCKET, Key: key })));
    expect(error.name).toBe('AccessDenied');
    expect(error.$metadata?.httpStatusCode).toBe(403);
    expect(error.message).toBe(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/UploaderRole/Uploader is not authorized to perform: s3:GetObject ` +
        `on resource: "arn:aws:s3:::${BUCKET}/${key}" because no identity-based policy allows the s3:GetObject action`,
    );
    // The reader's grant is on uploads/ only; its listing needs the uploads/ prefix.
    expect(
      (await failure(clientOf(reader).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'pending/p.txt' })))).name,
    ).toBe('AccessDenied');
    expect((await failure(clientOf(reader).send(new ListObjectsV2Command({ Bucket: BUCKET })))).name).toBe(
      'AccessDenied',
    );
  });

  it('authorizes a presigned URL as its signer', async () => {
    const theirs = await getSignedUrl(clientOf(uploader), new GetObjectCommand({ Bucket: BUCKET, Key: key }), {
      expiresIn: 60,
    });
    const refused = await fetch(theirs);
    expect([refused.status, xmlCode(await refused.text())]).toEqual([403, 'AccessDenied']);
    const readers = await getSignedUrl(clientOf(reader), new GetObjectCommand({ Bucket: BUCKET, Key: key }), {
      expiresIn: 60,
    });
    const served = await fetch(readers);
    expect([served.status, await served.text()]).toEqual([200, 'hello']);
  });

  it('authorizes a form upload as its signer, and refuses a key no principal has', async () => {
    const upload = async (signer: RehearsalPrincipal, target: string) => {
      const form = await createPresignedPost(clientOf(signer), { Bucket: BUCKET, Key: target, Expires: 60 });
      const body = new FormData();
      for (const [k, v] of Object.entries(form.fields)) body.append(k, v);
      body.append('file', new Blob(['form body']), 'f');
      const res = await fetch(form.url, { method: 'POST', body });
      return [res.status, xmlCode(await res.text()) ?? ''];
    };
    expect(await upload(reader, `uploads/${randomUUID()}`)).toEqual([403, 'AccessDenied']);
    const stored = `uploads/${randomUUID()}`;
    expect(await upload(uploader, stored)).toEqual([204, '']);
    const got = await clientOf(reader).send(new GetObjectCommand({ Bucket: BUCKET, Key: stored }));
    expect(await got.Body!.transformToString()).toBe('form body');
    const stranger = await failure(
      clientOf({ accessKeyId: 'AKIASTRANGER', secretAccessKey: 'x' }).send(
        new GetObjectCommand({ Bucket: BUCKET, Key: key }),
      ),
    );
    expect(stranger.name).toBe('InvalidAccessKeyId');
  });
});
