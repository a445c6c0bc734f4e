/**
 * The CI deploy's roles (lib/deploy-role-stack.ts): GitHub's OIDC provider and two roles whose
 * trust policies admit only the named repository (the deploy role: its deploy branch; the diff
 * role: its pull requests), and whose permissions reach only the CDK bootstrap roles and the
 * app stack. No bundling: the stack has no function.
 */
import { describe, expect, it } from '@jest/globals';
import { Annotations, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DeployRoleStack } from '../../lib/deploy-role-stack.js';
import type { DeployRoleStackProps } from '../../lib/deploy-role-stack.js';
import { DeploymentConfigError } from '../../lib/deployment-inputs.js';
import {
  CDK_JSON_FLAGS,
  actionsOf,
  joinedString,
  quietApp,
  resourcesOf,
  resourcesOfType,
  statementsOfRole,
} from './synth.js';
import type { CfnTemplate } from './synth.js';

const ISSUER = 'token.actions.githubusercontent.com';

function synth(props: Partial<DeployRoleStackProps> = {}, context: Record<string, string> = {}) {
  // cdk.json's feature flags, as `cdk synth` gives them (its CloudFormation validation is checked
  // in stack.test.ts, beside the app stack's).
  const app = quietApp({ context: { ...CDK_JSON_FLAGS, ...context } });
  const stack = new DeployRoleStack(app, 'ChatRelayDeployRole', {
    repository: 'acme/chat-relay',
    appStackName: 'ChatRelay',
    ...props,
  });
  const json = app.synth().getStackByName(stack.stackName).template as CfnTemplate;
  return { stack, json, template: Template.fromJSON(json) };
}

const roleByPath = (json: CfnTemplate, name: string) =>
  resourcesOfType(json, 'AWS::IAM::Role').find(([id]) => id.startsWith(name))!;

describe('deploy role stack', () => {
  const { stack, json, template } = synth();

  it("creates GitHub's OIDC provider for the STS audience", () => {
    template.resourceCountIs('AWS::IAM::OIDCProvider', 1);
    template.hasResourceProperties('AWS::IAM::OIDCProvider', {
      Url: `https://${ISSUER}`,
      ClientIdList: ['sts.amazonaws.com'],
    });
  });

  it('lets only the repository, on its deploy branch, assume the deploy role', () => {
    const [, role] = roleByPath(json, 'DeployRole');
    const statements = role.Properties!.AssumeRolePolicyDocument.Statement as any[];
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({
      Effect: 'Allow',
      Action: 'sts:AssumeRoleWithWebIdentity',
      Principal: { Federated: { Ref: resourcesOfType(json, 'AWS::IAM::OIDCProvider')[0]![0] } },
      Condition: {
        StringEquals: {
          [`${ISSUER}:aud`]: 'sts.amazonaws.com',
          [`${ISSUER}:sub`]: 'repo:acme/chat-relay:ref:refs/heads/main',
        },
      },
    });
    // Exact matches only: no StringLike wildcard that another repository or branch could meet.
    expect(Object.keys(statements[0].Condition)).toEqual(['StringEquals']);
    expect(role.Properties!.MaxSessionDuration).toBe(3600);
  });

  it("lets only the repository's pull requests assume the diff role", () => {
    const [, role] = roleByPath(json, 'DiffRole');
    const statements = role.Properties!.AssumeRolePolicyDocument.Statement as any[];
    expect(statements).toHaveLength(1);
    expect(statements[0].Condition).toEqual({
      StringEquals: {
        [`${ISSUER}:aud`]: 'sts.amazonaws.com',
        [`${ISSUER}:sub`]: 'repo:acme/chat-relay:pull_request',
      },
    });
  });

  const bootstrapRole = (kind: string) =>
    `arn:\${AWS::Partition}:iam::\${AWS::AccountId}:role/cdk-hnb659fds-${kind}-role-\${AWS::AccountId}-\${AWS::Region}`;
  const appStack = 'arn:${AWS::Partition}:cloudformation:${AWS::Region}:${AWS::AccountId}:stack/ChatRelay/*';
  // The nested stacks' names: ChatRelay-ApiChatsNestedStackChatsNestedStackResourceDF47DD6B-<suffix>.
  const nestedStacks =
    'arn:${AWS::Partition}:cloudformation:${AWS::Region}:${AWS::AccountId}:stack/ChatRelay-*NestedStackResource*/*';
  const grantsOf = (roleId: string) =>
    statementsOfRole(json, roleId).map((s) => ({
      actions: actionsOf(s).sort(),
      resources: resourcesOf(s).map(joinedString).sort(),
    }));

  it('may only assume the bootstrap roles and read the app stack (deploy role)', () => {
    const [id] = roleByPath(json, 'DeployRole');
    expect(grantsOf(id)).toEqual([
      {
        actions: ['sts:AssumeRole', 'sts:TagSession'],
        resources: ['deploy', 'file-publishing', 'image-publishing', 'lookup'].map(bootstrapRole).sort(),
      },
      {
        actions: ['cloudformation:DescribeStackEvents', 'cloudformation:DescribeStacks'],
        resources: [appStack, nestedStacks].sort(),
      },
    ]);
  });

  it('may only assume the read-only lookup role and read the app stack and its template (diff role)', () => {
    const [id] = roleByPath(json, 'DiffRole');
    expect(grantsOf(id)).toEqual([
      { actions: ['sts:AssumeRole', 'sts:TagSession'], resources: [bootstrapRole('lookup')] },
      {
        actions: ['cloudformation:DescribeStacks', 'cloudformation:GetTemplate'],
        resources: [appStack, nestedStacks].sort(),
      },
      // cdk diff finds the nested stacks through the root's resources.
      { actions: ['cloudformation:ListStackResources'], resources: [appStack] },
    ]);
  });

  it('outputs both role ARNs for the workflow', () => {
    expect(Object.keys(json.Outputs ?? {}).sort()).toEqual(['DeployRoleArn', 'DiffRoleArn']);
  });

  it('reports no unacknowledged AwsSolutions finding', () => {
    const report = new AwsSolutionsChecks().validateScope(stack);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
    Annotations.fromStack(stack).hasNoWarning('*', '*');
  });
});

describe('deploy role stack options', () => {
  it("takes the branch from its props and the bootstrap qualifier from CDK's context", () => {
    const { json } = synth({ branch: 'release/prod' }, { '@aws-cdk/core:bootstrapQualifier': 'relay01' });
    const [, role] = roleByPath(json, 'DeployRole');
    expect(role.Properties!.AssumeRolePolicyDocument.Statement[0].Condition.StringEquals[`${ISSUER}:sub`]).toBe(
      'repo:acme/chat-relay:ref:refs/heads/release/prod',
    );
    expect(JSON.stringify(json)).toContain('cdk-relay01-deploy-role-');
    expect(JSON.stringify(json)).not.toContain('hnb659fds');
  });

  it("uses the account's existing OIDC provider when given one", () => {
    const arn = `arn:aws:iam::123456789012:oidc-provider/${ISSUER}`;
    const { json, template } = synth({ oidcProviderArn: arn });
    template.resourceCountIs('AWS::IAM::OIDCProvider', 0);
    const [, role] = roleByPath(json, 'DeployRole');
    expect(role.Properties!.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Federated: arn });
  });

  it('refuses a repository, branch, qualifier or provider it could not scope the trust to', () => {
    for (const props of [
      { repository: 'chat-relay' },
      { repository: 'acme/*' },
      { branch: 'ma*n' },
      { branch: '../x' },
      { oidcProviderArn: 'arn:aws:iam::123456789012:oidc-provider/example.com' },
    ]) {
      expect(() => synth(props)).toThrow(DeploymentConfigError);
    }
    expect(() => synth({}, { '@aws-cdk/core:bootstrapQualifier': 'far-too-long-qualifier' })).toThrow(
      DeploymentConfigError,
    );
  });
});
