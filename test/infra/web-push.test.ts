/**
 * Web push in the synthesized template (lib/constructs/web-push.ts): present only when push is
 * enabled; the VAPID key pair in a retained secret made once by a custom resource; the public
 * key in every function's environment; the secret readable by the senders only (the consumer of
 * events' side effects, which sends the notifications, and POST /push/test). The consumer itself
 * (its stream mapping, filter, retries and dead-letter queue) is checked in stack.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AwsSolutionsChecks } from 'cdk-nag';
import { routeId, routes } from '../../lib/routes.js';
import type { RouteSpec } from '../../lib/routes.js';
import { actionsOf, cdkPath, refId, resourcesOf, resourcesOfType, statementsOfRole, synthesize } from './synth.js';
import type { CfnTemplate, Synthesized } from './synth.js';

const pushConfig = { push: { enabled: true, subject: 'mailto:ops@example.com' } };
const notifierPath = 'ChatRelay/Effects/Consumer/Resource';
const keyMakerPath = 'ChatRelay/Push/KeyMaker/Resource';

const functionsOf = (json: CfnTemplate) =>
  resourcesOfType(json, 'AWS::Lambda::Function').map(([id, fn]) => ({
    id,
    path: cdkPath(fn),
    env: (fn.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>,
    statements: statementsOfRole(json, refId(fn.Properties?.Role)!),
  }));
/** The stack's push secrets (beside them: the instance secret and the origin-verify secret). */
const pushSecrets = (json: CfnTemplate) =>
  resourcesOfType(json, 'AWS::SecretsManager::Secret').filter(([, r]) => cdkPath(r).startsWith('ChatRelay/Push/'));
const secretReaders = (json: CfnTemplate, secretId: string) =>
  functionsOf(json)
    .filter((f) =>
      f.statements.some(
        (s) => actionsOf(s).includes('secretsmanager:GetSecretValue') && resourcesOf(s).map(refId).includes(secretId),
      ),
    )
    .map((f) => f.path)
    .sort();

let synth: Synthesized;
beforeAll(() => {
  synth = synthesize({ config: pushConfig });
});
afterAll(() => synth?.dispose());

describe('web push enabled', () => {
  it('keeps the VAPID key pair in a retained secret that a deploy-time custom resource fills once', () => {
    const secrets = pushSecrets(synth.json);
    expect(secrets).toHaveLength(1);
    const [, secret] = secrets[0]!;
    expect(cdkPath(secret)).toBe('ChatRelay/Push/Keys/Resource');
    expect(secret.DeletionPolicy).toBe('Retain');
    expect(secret.Properties?.SecretString).toBeUndefined();
    const custom = resourcesOfType(synth.json, 'AWS::CloudFormation::CustomResource');
    expect(custom.map(([, r]) => cdkPath(r))).toEqual(['ChatRelay/Push/KeyPair/Default']);
    const maker = functionsOf(synth.json).find((f) => f.path === keyMakerPath)!;
    const writes = maker.statements.filter((s) => actionsOf(s).includes('secretsmanager:PutSecretValue'));
    expect(writes.flatMap(resourcesOf).map(refId)).toEqual([secrets[0]![0]]);
  });

  it('gives every function the public key from the custom resource, and the key pair to the senders only', () => {
    const [secretId] = pushSecrets(synth.json)[0]!;
    const [customId] = resourcesOfType(synth.json, 'AWS::CloudFormation::CustomResource')[0]!;
    const fns = functionsOf(synth.json).filter((f) => f.path !== keyMakerPath && !f.path.includes('KeyProvider'));
    for (const fn of fns) {
      expect([fn.path, fn.env.VAPID_PUBLIC_KEY]).toEqual([fn.path, { 'Fn::GetAtt': [customId, 'PublicKey'] }]);
    }
    const pushTest = (routes as readonly RouteSpec[]).find((r) => r.handler === 'push/test')!;
    const senders = [notifierPath, `ChatRelay/Api/${routeId(pushTest)}/Resource`].sort();
    expect(secretReaders(synth.json, secretId).filter((p) => p !== keyMakerPath)).toEqual(senders);
    for (const fn of fns)
      expect([fn.path, refId(fn.env.VAPID_SECRET_ARN) !== undefined]).toEqual([fn.path, senders.includes(fn.path)]);
  });

  it('passes cdk-nag', () => {
    const report = new AwsSolutionsChecks().validateScope(synth.stack);
    const findings = report.violations.flatMap((v) =>
      v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath ?? '?'}`),
    );
    expect(findings).toEqual([]);
  });
});

describe('web push with an existing key pair, and off', () => {
  it('uses a secret given by its complete ARN: no secret and no key pair made', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:chat-relay/vapid-AbC123';
    const other = synthesize({ config: pushConfig, vapidKeysSecretArn: arn });
    try {
      expect(pushSecrets(other.json)).toHaveLength(0);
      const notifier = functionsOf(other.json).find((f) => f.path === notifierPath)!;
      expect(notifier.env.VAPID_SECRET_ARN).toBe(arn);
    } finally {
      other.dispose();
    }
  });

  it('makes nothing for push when it is off: no secret, no key maker, no VAPID variables', () => {
    const off = synthesize({});
    try {
      expect(resourcesOfType(off.json, 'AWS::CloudFormation::CustomResource')).toHaveLength(0);
      const fns = functionsOf(off.json);
      expect(fns.some((f) => f.path.startsWith('ChatRelay/Push/'))).toBe(false);
      for (const fn of fns) expect(fn.env.VAPID_PUBLIC_KEY ?? fn.env.VAPID_SECRET_ARN).toBeUndefined();
    } finally {
      off.dispose();
    }
  });
});
