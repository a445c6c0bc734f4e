/**
 * Who the rehearsal's IAM knows (local/rehearse/principals.ts), on a small assembly shaped like the
 * stack's stream timeouts: a task function, and a state machine whose role CDK's LambdaInvoke
 * grants lambda:InvokeFunction on it. Step Functions assumes that role to invoke the task, so the
 * rehearsal must know it and its policy: when only the functions' roles were principals, every
 * task of the machine was denied ("No role … in the assembly") and the expiry task never ran,
 * where AWS runs it.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Assembly } from '../../local/rehearse/assembly.js';
import { PolicyEvaluator } from '../../local/rehearse/iam/evaluate.js';
import { rolePrincipals } from '../../local/rehearse/principals.js';
import { REHEARSAL_ACCOUNT, REHEARSAL_REGION } from '../../local/rehearse/types.js';

const assumedBy = (service: string) => ({
  Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: service } }],
  Version: '2012-10-17',
});

const TEMPLATE = {
  Resources: {
    ExpireStreamRole: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: assumedBy('lambda') } },
    ExpireStream: {
      Type: 'AWS::Lambda::Function',
      Properties: { Role: { 'Fn::GetAtt': ['ExpireStreamRole', 'Arn'] }, Handler: 'index.handler' },
      Metadata: { 'aws:asset:path': 'asset.expire' },
    },
    MachineRole: {
      Type: 'AWS::IAM::Role',
      Properties: { AssumeRolePolicyDocument: assumedBy('states.amazonaws.com') },
    },
    MachineRoleDefaultPolicy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        PolicyName: 'MachineRoleDefaultPolicy',
        Roles: [{ Ref: 'MachineRole' }],
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Action: 'lambda:InvokeFunction',
              Effect: 'Allow',
              Resource: [
                { 'Fn::GetAtt': ['ExpireStream', 'Arn'] },
                { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ExpireStream', 'Arn'] }, ':*']] },
              ],
            },
          ],
        },
      },
    },
    Machine: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        RoleArn: { 'Fn::GetAtt': ['MachineRole', 'Arn'] },
        DefinitionString: '{"StartAt":"Done","States":{"Done":{"Type":"Succeed"}}}',
      },
    },
    // A machine whose role the assembly does not define: nothing to know it by.
    Elsewhere: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        RoleArn: `arn:aws:iam::${REHEARSAL_ACCOUNT}:role/made-elsewhere`,
        DefinitionString: '{"StartAt":"Done","States":{"Done":{"Type":"Succeed"}}}',
      },
    },
  },
};

const dir = mkdtempSync(join(tmpdir(), 'chat-relay-principals-'));
mkdirSync(join(dir, 'asset.expire'));
writeFileSync(
  join(dir, 'manifest.json'),
  JSON.stringify({
    artifacts: {
      ChatRelay: { type: 'aws:cloudformation:stack', properties: { templateFile: 'ChatRelay.template.json' } },
    },
  }),
);
writeFileSync(join(dir, 'ChatRelay.template.json'), JSON.stringify(TEMPLATE));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the rehearsal’s principals', () => {
  const assembly = new Assembly(dir);
  const functions = assembly.functions();
  const known = rolePrincipals(assembly, functions);
  const iam = new PolicyEvaluator({
    account: REHEARSAL_ACCOUNT,
    region: REHEARSAL_REGION,
    principals: known.principals,
  });
  const expire = functions.find((f) => f.logicalId === 'ExpireStream')!;
  const machineRole = String(assembly.attribute('', 'MachineRole', 'Arn'));

  it('has each function’s role, with a key pair its function signs with, and each state machine’s role', () => {
    expect(known.principals.map((p) => p.name)).toEqual(['ExpireStream', 'Machine']);
    expect(known.principalOf.get(expire.roleArn)).toBe('ExpireStream');
    expect(known.principalOf.get(machineRole)).toBe('Machine');
    expect(known.credentials.get(expire.roleArn)?.accessKeyId).toMatch(/^ASIAREHEARSAL\d{7}$/);
    expect(known.credentials.has(machineRole)).toBe(false);
    expect(new Set(known.principals.map((p) => p.accessKeyId)).size).toBe(known.principals.length);
  });

  it('lets the state machine’s role invoke its task, as the role’s synthesized policy says', async () => {
    const name = known.principalOf.get(machineRole)!;
    expect(await iam.decide(name, { action: 'lambda:InvokeFunction', resource: expire.arn })).toEqual({
      allowed: true,
      message: '',
    });
    // And nothing its policy does not say.
    const other = `arn:aws:lambda:${REHEARSAL_REGION}:${REHEARSAL_ACCOUNT}:function:Other`;
    expect((await iam.decide(name, { action: 'lambda:InvokeFunction', resource: other })).allowed).toBe(false);
  });

  it('does not know a role the assembly does not define', () => {
    expect(known.principalOf.has(`arn:aws:iam::${REHEARSAL_ACCOUNT}:role/made-elsewhere`)).toBe(false);
  });
});
