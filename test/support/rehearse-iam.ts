/**
 * Principals for the rehearsal's IAM tests (local/rehearse/iam/): roles with the policies the
 * stack synthesizes (test/fixtures/rehearse-iam-policies.json) or written in the test, each with
 * its own random key pair, as the rehearsal gives each function.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { PolicyDocument, RehearsalPrincipal } from '../../local/rehearse/iam/types.js';

export const ACCOUNT = '000000000000';
export const REGION = 'us-east-1';

export type SynthesizedRole = 'filesGet' | 'dispatchClaim' | 'search';

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rehearse-iam-policies.json', import.meta.url), 'utf8'),
) as { policies: Record<SynthesizedRole, PolicyDocument> };

export const tableArn = (table: string): string => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${table}`;
export const queueArnOf = (name: string): string => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;

/** A synthesized role's policy with the table, stream and queues of the test filled in. */
export function synthesizedPolicy(
  role: SynthesizedRole,
  fill: { table: string; stream?: string; queues?: Record<string, string> },
): PolicyDocument {
  const text = JSON.stringify(fixture.policies[role])
    .replaceAll('${TABLE}', fill.table)
    .replaceAll('${STREAM}', fill.stream ?? '*')
    .replace(/\$\{QUEUE:([A-Za-z0-9]+)\}/g, (_, id: string) => fill.queues?.[id] ?? `unbound-${id}`);
  return JSON.parse(text) as PolicyDocument;
}

export function principal(name: string, ...documents: PolicyDocument[]): RehearsalPrincipal {
  return {
    name,
    roleArn: `arn:aws:iam::${ACCOUNT}:role/${name}Role`,
    accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(20).toString('base64'),
    policies: documents.map((document, i) => ({ name: `${name}Policy${i}`, document })),
  };
}

export const allow = (actions: string[], resources: string[], condition?: Record<string, unknown>) => ({
  Effect: 'Allow',
  Action: actions,
  Resource: resources,
  ...(condition ? { Condition: condition } : {}),
});

export const deny = (actions: string[], resources: string[], condition?: Record<string, unknown>) => ({
  Effect: 'Deny',
  Action: actions,
  Resource: resources,
  ...(condition ? { Condition: condition } : {}),
});

export const policy = (...statements: unknown[]): PolicyDocument => ({ Version: '2012-10-17', Statement: statements });
