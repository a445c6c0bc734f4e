/**
 * The error answers of the JSON-protocol services as AWS gives them, so that the SDK in a
 * function throws what it would throw on AWS:
 * - DynamoDB and Step Functions: HTTP 400, `{"__type":"com.amazon.coral.service#<Code>","Message":…}`;
 *   the SDK names the error by the part after `#` (AccessDeniedException, UnrecognizedClientException,
 *   InvalidSignatureException, MissingAuthenticationTokenException).
 * - SQS (AWS JSON 1.0, query-compatible): HTTP 403 for authorization and authentication faults,
 *   with the query protocol's code in `x-amzn-query-error: <Code>;Sender`, which the SDK takes as
 *   the error's name (AccessDenied, InvalidClientTokenId, SignatureDoesNotMatch…), as SQS answers.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { SignatureFault } from './sigv4.js';

export type Service = 'dynamodb' | 'sqs' | 'states';

interface Fault {
  /** The code of the JSON protocols (DynamoDB, Step Functions). */
  json: string;
  /** The query protocol's code, which SQS gives in x-amzn-query-error. */
  query: string;
  message: string;
}

const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret ' +
  'Access Key and signing method. Consult the service documentation for details.';

export const SIGNATURE_FAULTS: Record<SignatureFault, Fault> = {
  missing: {
    json: 'MissingAuthenticationTokenException',
    query: 'MissingAuthenticationToken',
    message: 'Request is missing Authentication Token',
  },
  'unknown-key': {
    json: 'UnrecognizedClientException',
    query: 'InvalidClientTokenId',
    message: 'The security token included in the request is invalid.',
  },
  'bad-signature': { json: 'InvalidSignatureException', query: 'SignatureDoesNotMatch', message: SIGNATURE_MISMATCH },
  expired: {
    json: 'InvalidSignatureException',
    query: 'SignatureDoesNotMatch',
    message: 'Signature expired: the request time is more than 15 minutes from the current time.',
  },
  'wrong-scope': {
    json: 'InvalidSignatureException',
    query: 'SignatureDoesNotMatch',
    message: 'Credential should be scoped to correct service.',
  },
};

export const accessDenied = (message: string): Fault => ({
  json: 'AccessDeniedException',
  query: 'AccessDenied',
  message,
});

export function sendFault(res: ServerResponse, service: Service, fault: Fault, status?: number): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const sqs = service === 'sqs';
  const body = JSON.stringify({ __type: `com.amazon.coral.service#${fault.json}`, Message: fault.message });
  res.writeHead(status ?? (sqs ? 403 : 400), {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(body),
    'x-amzn-requestid': randomUUID(),
    ...(sqs ? { 'x-amzn-query-error': `${fault.query};Sender` } : {}),
  });
  res.end(body);
}
