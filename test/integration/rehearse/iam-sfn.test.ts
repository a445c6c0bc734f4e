/**
 * Step Functions through the rehearsal's IAM gateway: StartExecution is authorized on the state
 * machine it names (the flush consumer's role may start the stream-timeouts machine only) and,
 * allowed, reaches the upstream unchanged. The upstream here is a stand-in that answers as
 * StartExecution does and keeps what it was sent (the rehearsal's runner is the lead's).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startIamGateway } from '../../../local/rehearse/iam/gateway.js';
import type { IamGateway } from '../../../local/rehearse/iam/gateway.js';
import { ACCOUNT, REGION, allow, policy, principal } from '../../support/rehearse-iam.js';

const machine = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:StreamTimeoutsStateMachine5E815B27`;
/** As the stack grants the flush consumer (lib/constructs: states:StartExecution on the one machine). */
const claim = principal('DispatchFlush', policy(allow(['states:StartExecution'], [machine])));
const other = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:Other`;

let upstream: Server;
let gateway: IamGateway;
let client: SFNClient;
const received: { target: string; body: string }[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ target: String(req.headers['x-amz-target']), body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ executionArn: `${machine.replace(':stateMachine:', ':execution:')}:e1`, startDate: 1 }));
    });
  });
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
  gateway = await startIamGateway({
    account: ACCOUNT,
    region: REGION,
    principals: [claim],
    upstream: {
      dynamodb: 'http://127.0.0.1:9',
      sqs: 'http://127.0.0.1:9',
      sfn: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    },
  });
  client = new SFNClient({ endpoint: gateway.endpoints.sfn, region: REGION, credentials: claim, maxAttempts: 1 });
});

afterAll(async () => {
  client?.destroy();
  await gateway?.stop();
  upstream?.closeAllConnections();
  upstream?.close();
});

describe('Step Functions through the IAM gateway', () => {
  it('forwards a StartExecution the role allows, as sent', async () => {
    const out = await client.send(new StartExecutionCommand({ stateMachineArn: machine, input: '{"chatId":"c1"}' }));
    expect(out.executionArn).toMatch(/:execution:/);
    expect(received).toEqual([
      {
        target: 'AWSStepFunctions.StartExecution',
        body: JSON.stringify({ stateMachineArn: machine, input: '{"chatId":"c1"}' }),
      },
    ]);
  });

  it('denies a StartExecution on another state machine with AccessDeniedException, and sends nothing', async () => {
    const error = await client.send(new StartExecutionCommand({ stateMachineArn: other, input: '{}' })).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.name).toBe('AccessDeniedException');
    expect(error?.message).toBe(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/DispatchFlushRole/DispatchFlush is not authorized to perform: ` +
        `states:StartExecution on resource: ${other} because no identity-based policy allows the states:StartExecution action`,
    );
    expect(received).toHaveLength(1);
  });
});
