/**
 * What the rehearsal's IAM gateway adds to a DynamoDB call (issue 34): the latency of a GetItem
 * straight to DynamoDB Local, through the gateway with its decision cached (same partition each
 * time), and through it with a decision to make on every call (a new partition each time), plus
 * the cost of a cached decision in-process. `npx tsx test/bench/rehearse-iam.ts [calls]`.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { startDynamo } from '../../local/dynamo.js';
import { dynamoChecks } from '../../local/rehearse/iam/dynamodb.js';
import { PolicyEvaluator } from '../../local/rehearse/iam/evaluate.js';
import { startIamGateway } from '../../local/rehearse/iam/gateway.js';
import { verifyServiceSignature } from '../../local/rehearse/iam/sigv4.js';
import type { RehearsalPrincipal } from '../../local/rehearse/iam/types.js';
import { ensureTable } from '../../local/table.js';
import { ACCOUNT, REGION, principal, synthesizedPolicy } from '../support/rehearse-iam.js';

/**
 * The front's own work on one GetItem, without the extra hop: verifying its signature, reading
 * its body, mapping it to checks and deciding them (cached), on a request the SDK signed.
 */
async function frontCpu(p: RehearsalPrincipal): Promise<void> {
  let captured: { headers: Record<string, string>; body: Uint8Array; path: string } | undefined;
  const capturing = new DynamoDBClient({
    endpoint: 'http://127.0.0.1:1',
    region: REGION,
    credentials: p,
    requestHandler: {
      handle: async (request: { headers: Record<string, string>; body: Uint8Array; path: string }) => {
        captured = request;
        throw new Error('captured');
      },
    } as never,
  });
  await capturing
    .send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'CHAT#1' }, sk: { S: 'META' } } }))
    .catch(() => undefined);
  const request = captured!;
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const evaluator = new PolicyEvaluator({ account: ACCOUNT, region: REGION, principals: [p] });
  const place = { account: ACCOUNT, region: REGION };
  const schema = async () => 'pk';
  const once = async () => {
    const body = Buffer.from(request.body);
    const verdict = verifyServiceSignature('dynamodb', 'POST', request.path, headers, body, () => p.secretAccessKey);
    if (!('accessKeyId' in verdict)) throw new Error(`signature: ${JSON.stringify(verdict)}`);
    const checks = await dynamoChecks(place, headers['x-amz-target']!, JSON.parse(body.toString('utf8')), schema);
    if (!(await evaluator.decideAll(p.name, checks)).allowed) throw new Error('denied');
  };
  const coldStarted = performance.now();
  await once();
  const cold = performance.now() - coldStarted;
  const started = performance.now();
  for (let i = 0; i < 5_000; i++) await once();
  const warm = ((performance.now() - started) / 5_000) * 1000;
  console.log(
    `front's own work per GetItem: first ${cold.toFixed(1)} ms (decision made), then ${warm.toFixed(1)} µs (cached)`,
  );
  capturing.destroy();
}

const CALLS = Number(process.argv[2] ?? 400);
const table = 'bench-rehearse-iam';

const dynamo = await startDynamo();
await ensureTable(dynamo.endpoint, table);
const reader = principal('FilesGet', synthesizedPolicy('filesGet', { table }));
const gateway = await startIamGateway({
  account: ACCOUNT,
  region: REGION,
  principals: [reader],
  upstream: { dynamodb: dynamo.endpoint, sqs: 'http://127.0.0.1:9' },
});
const client = (endpoint: string, credentials: { accessKeyId: string; secretAccessKey: string }) =>
  DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint, region: REGION, credentials }));
const direct = client(dynamo.endpoint, { accessKeyId: 'local', secretAccessKey: 'local' });
const through = client(gateway.endpoints.dynamodb, reader);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The machine is shared and its load drifts, so each gateway call is paired with a direct call
 * made just before it: the overhead is the median of the pairs' differences.
 */
async function paired(label: string, call: (i: number) => Promise<unknown>, baseline: () => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await Promise.all([call(-1 - i), baseline()]);
  const diffs: number[] = [];
  const own: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    let started = performance.now();
    await baseline();
    const base = performance.now() - started;
    started = performance.now();
    await call(i);
    const ms = performance.now() - started;
    own.push(ms);
    diffs.push(ms - base);
  }
  console.log(`${label.padEnd(40)} p50 ${median(own).toFixed(2)} ms, overhead p50 ${median(diffs).toFixed(2)} ms`);
}

const get = (db: DynamoDBDocumentClient, pk: string) =>
  db.send(new GetCommand({ TableName: table, Key: { pk, sk: 'META' } }));
try {
  const baseline = () => get(direct, 'CHAT#1');
  await paired('GetItem, gateway, decision cached', () => get(through, 'CHAT#1'), baseline);
  await paired('GetItem, gateway, a decision per call', (i) => get(through, `CHAT#cold-${i}`), baseline);
  const check = { action: 'dynamodb:GetItem', resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${table}` };
  const started = performance.now();
  for (let i = 0; i < 10_000; i++)
    await gateway.authorize('FilesGet', check.action, check.resource, { 'dynamodb:LeadingKeys': ['CHAT#1'] });
  const perDecision = ((performance.now() - started) / 10_000) * 1000;
  console.log(`cached decision in-process: ${perDecision.toFixed(1)} µs`);
  await frontCpu(reader);
  console.log(`denials: ${gateway.denials.length}`);
} finally {
  await gateway.stop();
  await dynamo.stop();
  process.exit(0);
}
