/**
 * Web push in the synthesized template (lib/constructs/web-push.ts): present only when push is
 * enabled; the VAPID key pair in the table's SECRET#VAPID item, made once by the stored-secrets
 * custom resource; the public key in every function's environment; the item readable by the senders
 * only (the consumer of events' side effects, which sends the notifications, and POST /push/test).
 * The consumer itself (its stream mapping, filter, retries and dead-letter queue) is checked in
 * stack.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AwsSolutionsChecks } from 'cdk-nag';
import { routeId, routes } from '../../lib/routes.js';
import type { RouteSpec } from '../../lib/routes.js';
import {
  actionsOf,
  cdkPath,
  isDeployTimePath,
  refId,
  resourcesOfType,
  routeFunctionPath,
  statementsOfRole,
  synthesize,
} from './synth.js';
import type { CfnTemplate, Synthesized } from './synth.js';

const pushConfig = { push: { enabled: true, subject: 'mailto:ops@example.com' } };
const notifierPath = 'ChatRelay/Effects/Consumer/Resource';
const deployTimePrefix = 'ChatRelay/Secrets/';

const functionsOf = (json: CfnTemplate) =>
  resourcesOfType(json, 'AWS::Lambda::Function').map(([id, fn]) => ({
    id,
    path: cdkPath(fn),
    env: (fn.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>,
    statements: statementsOfRole(json, refId(fn.Properties?.Role)!),
  }));
const vapidReaders = (json: CfnTemplate) =>
  functionsOf(json)
    .filter((f) =>
      String(f.env.STORED_SECRETS ?? '')
        .split(',')
        .includes('VAPID'),
    )
    .map((f) => f.path)
    .sort();
/** The IAM statements that name the VAPID item's partition. */
const vapidStatements = (statements: ReturnType<typeof functionsOf>[number]['statements']) =>
  statements.filter((s) => JSON.stringify(s.Condition ?? {}).includes('SECRET#VAPID'));

let synth: Synthesized;
beforeAll(() => {
  synth = synthesize({ config: pushConfig });
});
afterAll(() => synth?.dispose());

describe('web push enabled', () => {
  it('has the stored-secrets custom resource make the VAPID key pair in the table (no Secrets Manager)', () => {
    expect(resourcesOfType(synth.json, 'AWS::SecretsManager::Secret')).toEqual([]);
    const custom = resourcesOfType(synth.json, 'Custom::StoredSecrets');
    expect(custom.map(([, r]) => [cdkPath(r), r.Properties?.Secrets])).toEqual([
      ['ChatRelay/Secrets/Secrets/Default', ['INSTANCE', 'ORIGIN_VERIFY', 'VAPID']],
    ]);
    const maker = functionsOf(synth.json).find((f) => f.path === `${deployTimePrefix}Maker/Resource`)!;
    const writes = maker.statements.filter((s) => actionsOf(s).includes('dynamodb:PutItem'));
    expect(writes.map((s) => s.Condition)).toEqual([
      {
        'ForAllValues:StringEquals': {
          'dynamodb:LeadingKeys': ['SECRET#INSTANCE', 'SECRET#ORIGIN_VERIFY', 'SECRET#VAPID'],
        },
      },
    ]);
  });

  it('gives every function the public key from the custom resource, and the key pair to the senders only', () => {
    const [customId] = resourcesOfType(synth.json, 'Custom::StoredSecrets')[0]!;
    const fns = functionsOf(synth.json).filter((f) => !isDeployTimePath(f.path));
    for (const fn of fns) {
      expect([fn.path, fn.env.VAPID_PUBLIC_KEY]).toEqual([fn.path, { 'Fn::GetAtt': [customId, 'VapidPublicKey'] }]);
    }
    const pushTest = (routes as readonly RouteSpec[]).find((r) => r.handler === 'push/test')!;
    const senders = [notifierPath, routeFunctionPath(routeId(pushTest))].sort();
    expect(vapidReaders(synth.json)).toEqual(senders);
    for (const fn of fns) {
      // A sender: allowed to read the item and denied writing it; anyone else: only the Deny on SECRET#.
      const allowsRead = vapidStatements(fn.statements).some(
        (s) => s.Effect === 'Allow' && actionsOf(s).includes('dynamodb:BatchGetItem'),
      );
      expect([fn.path, allowsRead]).toEqual([fn.path, senders.includes(fn.path)]);
    }
  });

  it('passes cdk-nag', () => {
    const report = new AwsSolutionsChecks().validateScope(synth.stack);
    const findings = report.violations.flatMap((v) =>
      v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath ?? '?'}`),
    );
    expect(findings).toEqual([]);
  });
});

describe('web push off', () => {
  it('makes no key pair when push is off: no VAPID item asked for, no VAPID variables', () => {
    const off = synthesize({});
    try {
      const custom = resourcesOfType(off.json, 'Custom::StoredSecrets');
      expect(custom.map(([, r]) => r.Properties?.Secrets)).toEqual([['INSTANCE', 'ORIGIN_VERIFY']]);
      const fns = functionsOf(off.json);
      expect(fns.some((f) => f.path.startsWith('ChatRelay/Push/'))).toBe(false);
      for (const fn of fns) expect([fn.path, fn.env.VAPID_PUBLIC_KEY]).toEqual([fn.path, undefined]);
      expect(vapidReaders(off.json)).toEqual([]);
    } finally {
      off.dispose();
    }
  });
});
