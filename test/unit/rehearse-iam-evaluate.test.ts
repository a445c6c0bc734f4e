/**
 * The rehearsal's policy decisions (local/rehearse/iam/evaluate.ts) on the policies the stack
 * synthesizes (test/fixtures/rehearse-iam-policies.json): the Deny on the SECRET# partitions and
 * its exceptions, read-only roles, resource policies (enforce SSL), and AWS's denial sentences.
 */
import { describe, expect, it } from '@jest/globals';
import { PolicyEvaluator, denialMessage } from '../../local/rehearse/iam/evaluate.js';
import {
  ACCOUNT,
  REGION,
  allow,
  deny,
  policy,
  principal,
  queueArnOf,
  synthesizedPolicy,
  tableArn,
} from '../support/rehearse-iam.js';

const T = tableArn('relay');
const lead = (...values: string[]) => ({ 'dynamodb:LeadingKeys': values });

function evaluator() {
  const files = principal('FilesGet', synthesizedPolicy('filesGet', { table: 'relay' }));
  const claim = principal(
    'DispatchClaim',
    synthesizedPolicy('dispatchClaim', {
      table: 'relay',
      queues: { DispatchBatches0ABE82F6: 'batches', DispatchFlushSignalsB6B2388B: 'flush' },
    }),
  );
  const search = principal('Search', synthesizedPolicy('search', { table: 'relay' }));
  const enforceSsl = policy({
    Effect: 'Deny',
    Principal: { AWS: '*' },
    Action: 'sqs:*',
    Resource: queueArnOf('flush'),
    Condition: { Bool: { 'aws:SecureTransport': 'false' } },
  });
  const denyClaim = policy({
    Effect: 'Deny',
    Principal: { AWS: claim.roleArn },
    Action: 'sqs:SendMessage',
    Resource: queueArnOf('batches'),
  });
  return new PolicyEvaluator({
    account: ACCOUNT,
    region: REGION,
    principals: [files, claim, search],
    resourcePolicies: { [queueArnOf('flush')]: enforceSsl, [queueArnOf('batches')]: denyClaim },
  });
}

describe('decisions on the synthesized policies', () => {
  const iam = evaluator();

  it('lets a read-only role read any partition but the secrets it is not given, and write none', async () => {
    expect(await iam.decide('FilesGet', { action: 'dynamodb:GetItem', resource: T, context: lead('CHAT#1') })).toEqual({
      allowed: true,
      message: '',
    });
    expect(
      (await iam.decide('FilesGet', { action: 'dynamodb:Query', resource: `${T}/index/gsi1`, context: lead('X') }))
        .allowed,
    ).toBe(true);
    const put = await iam.decide('FilesGet', { action: 'dynamodb:PutItem', resource: T, context: lead('CHAT#1') });
    expect(put).toEqual({
      allowed: false,
      message:
        `User: arn:aws:sts::${ACCOUNT}:assumed-role/FilesGetRole/FilesGet is not authorized to perform: ` +
        `dynamodb:PutItem on resource: ${T} because no identity-based policy allows the dynamodb:PutItem action`,
    });
  });

  it('applies the Deny on SECRET# partitions with its exceptions, whatever the Allow says', async () => {
    const get = (...keys: string[]) =>
      iam.decide('FilesGet', { action: 'dynamodb:GetItem', resource: T, context: lead(...keys) });
    expect((await get('SECRET#INSTANCE')).allowed).toBe(true);
    expect((await get('SECRET#SESSION')).allowed).toBe(true);
    const other = await get('SECRET#ORIGIN_VERIFY');
    expect(other.allowed).toBe(false);
    expect(other.message).toMatch(/with an explicit deny in an identity-based policy$/);
    // A batch mixing an allowed secret with another partition is denied whole (ForAnyValue).
    const batch = await iam.decide('FilesGet', {
      action: 'dynamodb:BatchGetItem',
      resource: T,
      context: lead('SECRET#INSTANCE', 'CHAT#1'),
    });
    expect(batch.allowed).toBe(false);
    // A reader may not query or update its secret: the read-only Deny.
    expect(
      (await iam.decide('Search', { action: 'dynamodb:Query', resource: T, context: lead('SECRET#INSTANCE') })).allowed,
    ).toBe(false);
    // The search role may put its cursor key, and only that partition.
    expect(
      (await iam.decide('Search', { action: 'dynamodb:PutItem', resource: T, context: lead('SECRET#CURSOR') })).allowed,
    ).toBe(true);
    expect(
      (await iam.decide('Search', { action: 'dynamodb:PutItem', resource: T, context: lead('CHAT#1') })).allowed,
    ).toBe(false);
  });

  it('grants the dispatch claim its queue actions only on its queues', async () => {
    expect(
      (await iam.decide('DispatchClaim', { action: 'sqs:ReceiveMessage', resource: queueArnOf('batches') })).allowed,
    ).toBe(true);
    expect(
      (await iam.decide('DispatchClaim', { action: 'sqs:SendMessage', resource: queueArnOf('flush') })).allowed,
    ).toBe(true);
    const receive = await iam.decide('DispatchClaim', { action: 'sqs:ReceiveMessage', resource: queueArnOf('flush') });
    expect(receive.message).toBe(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/DispatchClaimRole/DispatchClaim is not authorized to perform: ` +
        `sqs:receivemessage on resource: ${queueArnOf('flush')} because no identity-based policy allows the sqs:receivemessage action`,
    );
  });

  it('evaluates the resource policy: an explicit Deny there wins over the identity Allow', async () => {
    const send = await iam.decide('DispatchClaim', { action: 'sqs:SendMessage', resource: queueArnOf('batches') });
    expect(send.allowed).toBe(false);
    expect(send.message).toMatch(/with an explicit deny in a resource-based policy$/);
    // The enforce-SSL Deny applies when the transport is not secure (AWS sets the key on every request).
    expect(
      (
        await iam.decide('DispatchClaim', {
          action: 'sqs:SendMessage',
          resource: queueArnOf('flush'),
          context: { 'aws:SecureTransport': 'false' },
        })
      ).allowed,
    ).toBe(false);
  });

  it('records every denial, and answers a repeated check from its cache', async () => {
    const fresh = evaluator();
    const check = { action: 'dynamodb:UpdateItem', resource: T, context: lead('CHAT#2') };
    const first = await fresh.decide('FilesGet', check);
    const again = await fresh.decide('FilesGet', check);
    // The very object of the first answer: a second evaluation would have made a new one.
    expect(again).toBe(first);
    expect(fresh.denials).toEqual([
      { principal: 'FilesGet', action: 'dynamodb:UpdateItem', resource: T, message: first.message },
      { principal: 'FilesGet', action: 'dynamodb:UpdateItem', resource: T, message: first.message },
    ]);
  });

  it('decides a whole call by its first denied check', async () => {
    const decision = await iam.decideAll('FilesGet', [
      { action: 'dynamodb:GetItem', resource: T, context: lead('A') },
      { action: 'dynamodb:DeleteItem', resource: T, context: lead('B') },
    ]);
    expect(decision.allowed).toBe(false);
    expect(decision.message).toContain('dynamodb:DeleteItem');
  });
});

describe('policies written here', () => {
  it('honours an explicit Deny and time conditions, and refuses what the evaluator cannot read', async () => {
    const p = principal(
      'Fn',
      policy(
        allow(['dynamodb:*'], [T]),
        deny(['dynamodb:DeleteItem'], [T]),
        allow(['s3:GetObject'], ['arn:aws:s3:::b/*'], { DateLessThan: { 'aws:CurrentTime': '2000-01-01T00:00:00Z' } }),
      ),
    );
    const iam = new PolicyEvaluator({ account: ACCOUNT, region: REGION, principals: [p] });
    expect((await iam.decide('Fn', { action: 'dynamodb:PutItem', resource: T })).allowed).toBe(true);
    expect((await iam.decide('Fn', { action: 'dynamodb:DeleteItem', resource: T })).message).toMatch(
      /explicit deny in an identity-based policy$/,
    );
    expect((await iam.decide('Fn', { action: 's3:GetObject', resource: 'arn:aws:s3:::b/k' })).message).toBe(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/FnRole/Fn is not authorized to perform: s3:GetObject on resource: "arn:aws:s3:::b/k" because no identity-based policy allows the s3:GetObject action`,
    );
    expect((await iam.decide('Fn', { action: 'dynamodb:NoSuchAction', resource: T })).allowed).toBe(false);
    await expect(iam.decide('Nobody', { action: 'dynamodb:GetItem', resource: T })).rejects.toThrow(
      /no principal named Nobody/,
    );
  });

  it('words denials as AWS does', () => {
    const s = 'arn:aws:sts::1:assumed-role/R/f';
    expect(denialMessage(s, 'dynamodb:PutItem', 'arn:t', 'implicit')).toBe(
      'User: arn:aws:sts::1:assumed-role/R/f is not authorized to perform: dynamodb:PutItem on resource: arn:t because no identity-based policy allows the dynamodb:PutItem action',
    );
    expect(denialMessage(s, 'sqs:SendMessage', 'arn:q', 'resource')).toBe(
      'User: arn:aws:sts::1:assumed-role/R/f is not authorized to perform: sqs:sendmessage on resource: arn:q with an explicit deny in a resource-based policy',
    );
  });
});
