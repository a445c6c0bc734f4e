/**
 * The IAM gateway of the rehearsal: one loopback HTTP front per service (DynamoDB, SQS, Step
 * Functions) between the functions' SDK clients and the local engines. Each request is verified
 * as AWS verifies it (SigV4 with the secret of the principal its key id names), turned into the
 * checks IAM makes (dynamodb.ts, sqs.ts, sfn.ts), decided by the policy evaluator (evaluate.ts)
 * against that principal's identity policies and the resource's policy, then either forwarded
 * to the engine byte for byte, its answer piped back (an SQS long poll included: no timeout here,
 * and a client that gives up aborts the upstream request), or answered as AWS answers a denial
 * (denied.ts); every call let through is told to the `onCall` listeners, as CloudTrail's data
 * events record it (tests count a kind of call a deployment made). `authorize` asks the same question in-process, for what the rehearsal does with
 * a function's role itself (an event source mapping polling a queue or stream, a state machine
 * invoking a function); `s3Hook` hands the local S3 (local/s3.ts) the same principals and policies.
 */
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DYNAMODB_TARGET, STREAMS_TARGET, dynamoChecks } from './dynamodb.js';
import type { PartitionKeyOf, Place } from './dynamodb.js';
import { SIGNATURE_FAULTS, accessDenied, sendFault } from './denied.js';
import type { Service } from './denied.js';
import { PolicyEvaluator } from './evaluate.js';
import { s3AccessHook } from './s3.js';
import type { S3AccessHook } from './s3.js';
import { SFN_TARGET, sfnChecks } from './sfn.js';
import { verifyServiceSignature } from './sigv4.js';
import { SQS_TARGET, sqsChecks } from './sqs.js';
import { obj } from './types.js';
import type { Body, Check, Decision, Denial, PolicyDocument, RehearsalPrincipal } from './types.js';

export type { Check, Decision, Denial, PolicyDocument, RehearsalPrincipal } from './types.js';
export type { S3AccessHook } from './s3.js';

/** A table's key attributes: its partition key and each index's. */
export interface KeySchema {
  partitionKey: string;
  indexes?: Record<string, string>;
}

export interface IamGatewayOptions {
  /** The rehearsal's account and region (e.g. 000000000000 / us-east-1): ARNs and messages use them. */
  account: string;
  region: string;
  principals: RehearsalPrincipal[];
  /** The real local engines' endpoints. */
  upstream: { dynamodb: string; sqs: string; sfn?: string };
  /** SQS queue policies and S3 bucket policies, by the ARN of the queue or bucket. */
  resourcePolicies?: Record<string, PolicyDocument>;
  /** Key schemas by table name; a table not named here is described once by the upstream. */
  keySchemas?: Record<string, KeySchema>;
}

export interface IamGateway {
  /** Where the functions' SDK clients send their requests instead of the engines. */
  endpoints: { dynamodb: string; sqs: string; sfn?: string };
  /** One check in-process, for a call the rehearsal makes on a principal's behalf. */
  authorize(
    principalName: string,
    action: string,
    resource: string,
    context?: Record<string, string | string[]>,
  ): Promise<Decision>;
  /**
   * The local S3's hook (local/s3.ts startLocalS3): the principals' keys and policies, bucket
   * policies included. `trusted` is a key pair verified but never denied (the rehearsal's own calls).
   */
  s3Hook(trusted?: { accessKeyId: string; secretAccessKey: string }): S3AccessHook;
  /** Every denial, in order (for tests and the start-up/exit summary). */
  denials: Denial[];
  /** Listens to every call let through (returns the unsubscribe). */
  onCall(listener: (call: AllowedCall) => void): () => void;
  stop(): Promise<void>;
}

/**
 * A call the gateway let through, told once its answer is complete: its service, the principal
 * (role) that made it, its operation, request and HTTP status, and the error's type when it failed.
 */
export interface AllowedCall {
  service: Service;
  principal: string;
  /** The operation, without the target's version prefix (`TransactWriteItems`, `SendMessage`). */
  operation: string;
  input: Body;
  status: number;
  /** The error's `__type` without its namespace (`TransactionCanceledException`). */
  errorType?: string;
}

/** The largest request body taken (DynamoDB's largest request is 16 MB; SQS's 1 MiB). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

interface Front {
  service: Service;
  /** The X-Amz-Target prefixes it takes. */
  targets: string[];
  upstream: string;
  checks(target: string, body: Body): Promise<Check[]> | Check[];
}

export async function startIamGateway(o: IamGatewayOptions): Promise<IamGateway> {
  const place: Place = { account: o.account, region: o.region };
  const evaluator = new PolicyEvaluator(o);
  const agent = new Agent({ keepAlive: true });
  const ddb = new DynamoDBClient({
    endpoint: o.upstream.dynamodb,
    region: o.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const schemas = new Map<string, Promise<KeySchema | undefined>>(
    Object.entries(o.keySchemas ?? {}).map(([name, schema]) => [name, Promise.resolve(schema)]),
  );
  const partitionKeyOf: PartitionKeyOf = async (table, index) => {
    let pending = schemas.get(table);
    if (!pending) {
      pending = describe(ddb, table);
      schemas.set(table, pending);
      // A table that does not exist yet may be created later: only a schema found is kept.
      pending.then((found) => found ?? schemas.delete(table)).catch(() => schemas.delete(table));
    }
    const schema = await pending.catch(() => undefined);
    return index === undefined ? schema?.partitionKey : schema?.indexes?.[index];
  };

  const fronts: Front[] = [
    {
      service: 'dynamodb',
      targets: [DYNAMODB_TARGET, STREAMS_TARGET],
      upstream: o.upstream.dynamodb,
      checks: (target, body) => dynamoChecks(place, target, body, partitionKeyOf),
    },
    { service: 'sqs', targets: [SQS_TARGET], upstream: o.upstream.sqs, checks: (t, b) => sqsChecks(place, t, b) },
    ...(o.upstream.sfn
      ? [{ service: 'states' as const, targets: [SFN_TARGET], upstream: o.upstream.sfn, checks: sfnChecks }]
      : []),
  ];
  const servers: Server[] = [];
  const endpoints: Record<string, string> = {};
  const listeners = new Set<(call: AllowedCall) => void>();
  for (const front of fronts) {
    const server = createServer((req, res) => {
      handle(front, req, res).catch((error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(JSON.stringify({ __type: 'InternalFailure', message: (error as Error).message }));
        } else res.destroy();
      });
    });
    // Long polls (SQS ReceiveMessage waits up to 20 s) are the engine's to end, not this front's.
    server.requestTimeout = 0;
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    servers.push(server);
    endpoints[front.service === 'states' ? 'sfn' : front.service] =
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function handle(front: Front, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === undefined)
      return sendFault(
        res,
        front.service,
        { json: 'RequestEntityTooLarge', query: 'RequestEntityTooLarge', message: 'Request body too large' },
        413,
      );
    const verdict = verifyServiceSignature(
      front.service,
      req.method ?? 'POST',
      req.url ?? '/',
      req.headers,
      body,
      (keyId) => evaluator.principalByKeyId(keyId)?.secretAccessKey,
    );
    if ('fault' in verdict) return sendFault(res, front.service, SIGNATURE_FAULTS[verdict.fault]);
    const principal = evaluator.principalByKeyId(verdict.accessKeyId)!;
    const target = String(req.headers['x-amz-target'] ?? '');
    if (!front.targets.some((prefix) => target.startsWith(prefix)))
      return sendFault(
        res,
        front.service,
        { json: 'UnknownOperationException', query: 'InvalidAction', message: `Unknown operation ${target}` },
        400,
      );
    let parsed: Body;
    try {
      parsed = obj(JSON.parse(body.length === 0 ? '{}' : body.toString('utf8')));
    } catch {
      return sendFault(
        res,
        front.service,
        { json: 'SerializationException', query: 'MalformedQueryString', message: 'Request body is not JSON' },
        400,
      );
    }
    const decision = await evaluator.decideAll(principal.name, await front.checks(target, parsed));
    if (!decision.allowed) return sendFault(res, front.service, accessDenied(decision.message));
    const call = {
      service: front.service,
      principal: principal.name,
      operation: target.split('.').pop()!,
      input: parsed,
    };
    forward(front.upstream, req, body, res, (status, errorType) => {
      for (const listener of listeners) listener({ ...call, status, ...(errorType ? { errorType } : {}) });
    });
  }

  function forward(
    upstream: string,
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    answered: (status: number, errorType?: string) => void,
  ): void {
    const out = httpRequest(
      `${upstream}${req.url ?? '/'}`,
      { method: req.method, headers: req.headers, agent },
      (answer) => {
        const status = answer.statusCode ?? 502;
        res.writeHead(status, answer.headers);
        answer.pipe(res);
        // An error's type, for the listeners (a JSON protocol's `__type`; none for a success).
        const chunks: Buffer[] = [];
        if (listeners.size > 0 && status >= 400) answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          if (listeners.size === 0) return;
          const type = /"__type"\s*:\s*"([^"]*)"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
          answered(status, type?.split('#').pop());
        });
      },
    );
    // The caller gave up (an aborted long poll, a timed-out SDK call): so does the upstream call.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    out.on('error', () => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({ __type: 'ServiceUnavailable', message: 'rehearsal: the local engine did not answer' }),
        );
      } else res.destroy();
    });
    out.end(body);
  }

  return {
    endpoints: endpoints as IamGateway['endpoints'],
    authorize: (principalName, action, resource, context) =>
      evaluator.decide(principalName, { action, resource, ...(context ? { context } : {}) }),
    s3Hook: (trusted) => s3AccessHook(evaluator, trusted),
    denials: evaluator.denials,
    onCall: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise<void>((ok) => server.close(() => ok()))));
      agent.destroy();
      ddb.destroy();
    },
  };
}

/** The whole body, or undefined past MAX_BODY_BYTES. */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.pause();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function describe(ddb: DynamoDBClient, table: string): Promise<KeySchema | undefined> {
  try {
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: table }));
    const hash = (keys: { AttributeName?: string; KeyType?: string }[] | undefined) =>
      keys?.find((k) => k.KeyType === 'HASH')?.AttributeName;
    const partitionKey = hash(Table?.KeySchema);
    if (!partitionKey) return undefined;
    const indexes: Record<string, string> = {};
    for (const index of [...(Table?.GlobalSecondaryIndexes ?? []), ...(Table?.LocalSecondaryIndexes ?? [])]) {
      const pk = hash(index.KeySchema);
      if (index.IndexName && pk) indexes[index.IndexName] = pk;
    }
    return { partitionKey, indexes };
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}
