/**
 * An S3 request (path style, as the local S3 is addressed) as the checks IAM makes for it, and
 * the hook that lets the local S3 (local/s3.ts) verify and authorize each request as its signer:
 * a function's SDK call, a presigned URL or a form upload it signed (AWS evaluates the signer's
 * permissions when the request is made, not when it was signed).
 * - objects: GET/HEAD → s3:GetObject (GetObjectVersion with a versionId), PUT → s3:PutObject (a
 *   copy also s3:GetObject on its source; multipart parts and their completion are PutObject),
 *   DELETE → s3:DeleteObject (AbortMultipartUpload with an uploadId), and the subresources
 *   (tagging, acl…) as their own actions; resource `arn:aws:s3:::<bucket>/<key>`;
 * - buckets: GET/HEAD → s3:ListBucket with s3:prefix, s3:delimiter and s3:max-keys when given
 *   (ListBucketMultipartUploads, GetBucketLocation… for the subresources); resource the bucket;
 * - DeleteObjects (POST ?delete): s3:DeleteObject on each key of the body. S3 would delete the
 *   allowed keys and report the others in the answer; here one denied key denies the request.
 */
import type { S3Access, S3Request } from '../../s3-access.js';
import type { PolicyEvaluator } from './evaluate.js';
import type { Check, Decision } from './types.js';

export type S3AccessHook = S3Access;

const OBJECT_GET: Record<string, string> = {
  uploadId: 'ListMultipartUploadParts',
  tagging: 'GetObjectTagging',
  acl: 'GetObjectAcl',
  attributes: 'GetObjectAttributes',
  retention: 'GetObjectRetention',
  'legal-hold': 'GetObjectLegalHold',
};
const OBJECT_PUT: Record<string, string> = {
  tagging: 'PutObjectTagging',
  acl: 'PutObjectAcl',
  retention: 'PutObjectRetention',
  'legal-hold': 'PutObjectLegalHold',
};
const OBJECT_DELETE: Record<string, string> = { uploadId: 'AbortMultipartUpload', tagging: 'DeleteObjectTagging' };
const BUCKET_GET: Record<string, string> = {
  uploads: 'ListBucketMultipartUploads',
  versions: 'ListBucketVersions',
  location: 'GetBucketLocation',
  policy: 'GetBucketPolicy',
  cors: 'GetBucketCORS',
  acl: 'GetBucketAcl',
  tagging: 'GetBucketTagging',
  versioning: 'GetBucketVersioning',
  notification: 'GetBucketNotification',
  lifecycle: 'GetLifecycleConfiguration',
  encryption: 'GetEncryptionConfiguration',
};
const BUCKET_PUT: Record<string, string> = {
  policy: 'PutBucketPolicy',
  cors: 'PutBucketCORS',
  acl: 'PutBucketAcl',
  tagging: 'PutBucketTagging',
  versioning: 'PutBucketVersioning',
  notification: 'PutBucketNotification',
  lifecycle: 'PutLifecycleConfiguration',
  encryption: 'PutEncryptionConfiguration',
};
const BUCKET_DELETE: Record<string, string> = {
  policy: 'DeleteBucketPolicy',
  cors: 'PutBucketCORS',
  tagging: 'PutBucketTagging',
  lifecycle: 'PutLifecycleConfiguration',
};

const sub = (table: Record<string, string>, query: Map<string, string>): string | undefined =>
  Object.keys(table).find((name) => query.has(name)) ?? undefined;

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const unxml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (all, e: string) =>
    e[0] === '#'
      ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)))
      : (XML_ENTITIES[e] ?? all),
  );

/** `x-amz-copy-source` (`[/]bucket/key[?versionId=…]`, URL-encoded) → its object's ARN. */
function copySourceArn(header: string): string {
  const [path] = header.split('?');
  return `arn:aws:s3:::${decodeURIComponent(path!.replace(/^\//, ''))}`;
}

export function s3Checks(request: S3Request): Check[] {
  const { method, bucket, key, headers } = request;
  const query = new Map(request.query);
  const base: Record<string, string> = { 's3:authType': request.authType, 's3:signatureversion': 'AWS4-HMAC-SHA256' };
  const check = (action: string, resource: string, context: Record<string, string> = {}): Check => ({
    action: `s3:${action}`,
    resource,
    context: { ...base, ...context },
  });
  if (bucket === '') return [check('ListAllMyBuckets', '*')];
  const bucketArn = `arn:aws:s3:::${bucket}`;
  if (key !== '') {
    const objectArn = `${bucketArn}/${key}`;
    const copySource = headers['x-amz-copy-source'];
    switch (method) {
      case 'GET':
        return [
          check(
            OBJECT_GET[sub(OBJECT_GET, query) ?? ''] ?? (query.has('versionId') ? 'GetObjectVersion' : 'GetObject'),
            objectArn,
          ),
        ];
      case 'HEAD':
        return [check(query.has('versionId') ? 'GetObjectVersion' : 'GetObject', objectArn)];
      case 'PUT': {
        const subresource = sub(OBJECT_PUT, query);
        if (subresource) return [check(OBJECT_PUT[subresource]!, objectArn)];
        const put = check('PutObject', objectArn);
        return typeof copySource === 'string' ? [check('GetObject', copySourceArn(copySource)), put] : [put];
      }
      case 'POST':
        return [
          check(query.has('restore') ? 'RestoreObject' : query.has('select') ? 'GetObject' : 'PutObject', objectArn),
        ];
      case 'DELETE':
        return [
          check(
            OBJECT_DELETE[sub(OBJECT_DELETE, query) ?? ''] ??
              (query.has('versionId') ? 'DeleteObjectVersion' : 'DeleteObject'),
            objectArn,
          ),
        ];
    }
    return [check(`${method}Object`, objectArn)];
  }
  switch (method) {
    case 'GET':
    case 'HEAD': {
      const subresource = method === 'GET' ? sub(BUCKET_GET, query) : undefined;
      if (subresource) return [check(BUCKET_GET[subresource]!, bucketArn)];
      const context: Record<string, string> = {};
      for (const name of ['prefix', 'delimiter', 'max-keys']) {
        const value = query.get(name);
        if (value !== undefined) context[`s3:${name}`] = value;
      }
      return [check('ListBucket', bucketArn, context)];
    }
    case 'PUT':
      return [check(BUCKET_PUT[sub(BUCKET_PUT, query) ?? ''] ?? 'CreateBucket', bucketArn)];
    case 'DELETE':
      return [check(BUCKET_DELETE[sub(BUCKET_DELETE, query) ?? ''] ?? 'DeleteBucket', bucketArn)];
    case 'POST': {
      if (!query.has('delete')) return [check('PutObject', `${bucketArn}/${key}`)];
      const keys = [...(request.body?.toString('utf8') ?? '').matchAll(/<Key>([\s\S]*?)<\/Key>/g)].map((m) =>
        unxml(m[1]!),
      );
      return keys.map((k) => check('DeleteObject', `${bucketArn}/${k}`));
    }
  }
  return [check(`${method}Bucket`, bucketArn)];
}

/**
 * The local S3's hook for the principals of `evaluator`. `trusted`, when given, is a key pair
 * that is verified but never denied: the rehearsal's own calls (setup, test helpers).
 */
export function s3AccessHook(
  evaluator: PolicyEvaluator,
  trusted?: { accessKeyId: string; secretAccessKey: string },
): S3Access {
  return {
    secretOf: (accessKeyId) =>
      accessKeyId === trusted?.accessKeyId
        ? trusted.secretAccessKey
        : evaluator.principalByKeyId(accessKeyId)?.secretAccessKey,
    authorize: async (request): Promise<Decision> => {
      if (request.accessKeyId === trusted?.accessKeyId) return { allowed: true, message: '' };
      const principal = evaluator.principalByKeyId(request.accessKeyId);
      if (!principal) return { allowed: false, message: 'Access Denied' };
      return evaluator.decideAll(principal.name, s3Checks(request));
    },
  };
}
