/**
 * The one-time AWS side of the CI deploy (.github/workflows/deploy.yml): GitHub's OpenID Connect
 * provider and two roles that GitHub Actions assumes with its OIDC token, so the workflow holds
 * no long-lived AWS key.
 *
 * - The deploy role: only the named repository's workflows running on the named branch may
 *   assume it, and it may only assume the CDK bootstrap roles of this account and region
 *   (deploy, file and image publishing, lookup: what `cdk deploy` itself uses) and read the
 *   app stack's status. What CloudFormation may change is the bootstrap deploy role's business.
 * - The diff role: pull requests of the same repository may assume it; it may assume the
 *   bootstrap lookup role (read-only) and read the app stack's template, which `cdk diff` needs.
 *
 * Built by bin/app.ts when `-c githubRepository=owner/name` is given (see docs/deployment.md,
 * "Deploying from CI"); deployed once by hand with an administrator's credentials.
 */
import { Arn, ArnFormat, CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { Effect, OidcProviderNative, PolicyStatement, Role, WebIdentityPrincipal } from 'aws-cdk-lib/aws-iam';
import type { IOidcProvider } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { DeploymentConfigError } from './deployment-inputs.js';

/** GitHub Actions' token issuer, and the audience the official AWS credentials action asks for. */
export const GITHUB_OIDC_ISSUER = 'token.actions.githubusercontent.com';
export const GITHUB_OIDC_AUDIENCE = 'sts.amazonaws.com';
/** The qualifier `cdk bootstrap` uses unless told otherwise, and the context key that changes it. */
export const DEFAULT_BOOTSTRAP_QUALIFIER = 'hnb659fds';
export const BOOTSTRAP_QUALIFIER_CONTEXT = '@aws-cdk/core:bootstrapQualifier';

export interface DeployRoleStackProps extends StackProps {
  /** The GitHub repository as owner/name (`-c githubRepository=`). */
  repository: string;
  /** The branch whose workflow runs may deploy (`-c githubBranch=`). @default main */
  branch?: string | undefined;
  /** The name of the app stack the roles may read (bin/app.ts names it ChatRelay). */
  appStackName: string;
  /**
   * ARN of the account's existing GitHub OIDC provider (`-c githubOidcProviderArn=`): an account
   * has at most one provider per issuer, so a second stack cannot create another.
   */
  oidcProviderArn?: string | undefined;
}

const REPOSITORY = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const BRANCH = /^[A-Za-z0-9._/-]+$/;
const QUALIFIER = /^[A-Za-z0-9_-]{1,10}$/;
/** In the logical id of every nested stack resource CDK makes, hence in the nested stacks' names. */
export const NESTED_STACK_MARK = 'NestedStackResource';

const OIDC_PROVIDER_ARN = /^arn:aws[a-z-]*:iam::\d{12}:oidc-provider\/token\.actions\.githubusercontent\.com$/;

/**
 * Checks the deploy role's inputs (the repository, branch and provider given with `-c`, the
 * bootstrap qualifier from context), throwing DeploymentConfigError for one it cannot use; returns
 * the qualifier. bin/app.ts calls it before it builds any stack, so a bad input stops the synth at once.
 */
export function checkDeployRoleInputs(
  scope: Construct,
  props: Pick<DeployRoleStackProps, 'repository' | 'branch' | 'oidcProviderArn'>,
): string {
  const { repository, branch = 'main', oidcProviderArn } = props;
  // The qualifier CDK's synthesizers use, so the roles named here are the ones the CLI assumes
  // (`-c @aws-cdk/core:bootstrapQualifier=`, as given to `cdk bootstrap --qualifier`).
  const qualifier = String(scope.node.tryGetContext(BOOTSTRAP_QUALIFIER_CONTEXT) ?? DEFAULT_BOOTSTRAP_QUALIFIER);
  if (!REPOSITORY.test(repository)) {
    throw new DeploymentConfigError(`githubRepository must be owner/name, got "${repository}".`);
  }
  if (!BRANCH.test(branch) || branch.includes('..')) {
    throw new DeploymentConfigError(`githubBranch must be a branch name, got "${branch}".`);
  }
  if (!QUALIFIER.test(qualifier)) {
    throw new DeploymentConfigError(
      `${BOOTSTRAP_QUALIFIER_CONTEXT} must be 1 to 10 letters, digits, - or _, got "${qualifier}".`,
    );
  }
  if (oidcProviderArn !== undefined && !OIDC_PROVIDER_ARN.test(oidcProviderArn)) {
    throw new DeploymentConfigError(
      `githubOidcProviderArn must be the ARN of the ${GITHUB_OIDC_ISSUER} provider, got "${oidcProviderArn}".`,
    );
  }
  return qualifier;
}

export class DeployRoleStack extends Stack {
  readonly provider: IOidcProvider;
  readonly deployRole: Role;
  readonly diffRole: Role;

  constructor(scope: Construct, id: string, props: DeployRoleStackProps) {
    const { repository, branch = 'main', appStackName, oidcProviderArn, ...stackProps } = props;
    const qualifier = checkDeployRoleInputs(scope, props);
    super(scope, id, {
      description: `Chat relay: the roles GitHub Actions of ${repository} assume to diff and deploy ${appStackName}`,
      ...stackProps,
    });

    this.provider = oidcProviderArn
      ? OidcProviderNative.fromOidcProviderArn(this, 'GitHubOidc', oidcProviderArn)
      : new OidcProviderNative(this, 'GitHubOidc', {
          url: `https://${GITHUB_OIDC_ISSUER}`,
          clientIds: [GITHUB_OIDC_AUDIENCE],
        });

    const assumedBy = (subject: string) =>
      new WebIdentityPrincipal(this.provider.oidcProviderArn, {
        StringEquals: {
          [`${GITHUB_OIDC_ISSUER}:aud`]: GITHUB_OIDC_AUDIENCE,
          [`${GITHUB_OIDC_ISSUER}:sub`]: subject,
        },
      });
    const bootstrapRole = (kind: string) =>
      Arn.format(
        {
          service: 'iam',
          region: '',
          resource: 'role',
          resourceName: `cdk-${qualifier}-${kind}-role-${this.account}-${this.region}`,
        },
        this,
      );
    const appStack = Arn.format(
      {
        service: 'cloudformation',
        resource: 'stack',
        resourceName: `${appStackName}/*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      },
      this,
    );
    // Its nested stacks (lib/constructs/api-area.ts): CloudFormation names them
    // `<parent>-<logical id of the nested stack resource>-<suffix>`, and CDK's nested stack resources'
    // logical ids all contain NestedStackResource. `cdk diff` reads their templates as the root's.
    const nestedStacks = Arn.format(
      {
        service: 'cloudformation',
        resource: 'stack',
        resourceName: `${appStackName}-*${NESTED_STACK_MARK}*/*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      },
      this,
    );

    this.deployRole = new Role(this, 'DeployRole', {
      description: `GitHub Actions of ${repository} on ${branch}: cdk deploy of ${appStackName}`,
      assumedBy: assumedBy(`repo:${repository}:ref:refs/heads/${branch}`),
      maxSessionDuration: Duration.hours(1),
    });
    this.deployRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['sts:AssumeRole', 'sts:TagSession'],
        resources: ['deploy', 'file-publishing', 'image-publishing', 'lookup'].map(bootstrapRole),
      }),
    );
    this.deployRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['cloudformation:DescribeStacks', 'cloudformation:DescribeStackEvents'],
        resources: [appStack, nestedStacks],
      }),
    );

    this.diffRole = new Role(this, 'DiffRole', {
      description: `GitHub Actions of ${repository} on pull requests: cdk diff of ${appStackName}`,
      assumedBy: assumedBy(`repo:${repository}:pull_request`),
      maxSessionDuration: Duration.hours(1),
    });
    this.diffRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['sts:AssumeRole', 'sts:TagSession'],
        resources: [bootstrapRole('lookup')],
      }),
    );
    this.diffRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['cloudformation:DescribeStacks', 'cloudformation:GetTemplate'],
        resources: [appStack, nestedStacks],
      }),
    );
    // How `cdk diff` finds the nested stacks' deployed names: the root's resources (their physical ids).
    this.diffRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['cloudformation:ListStackResources'],
        resources: [appStack],
      }),
    );

    const stackArnPrefix =
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:cloudformation:<AWS::Region>:<AWS::AccountId>:';
    for (const role of [this.deployRole, this.diffRole]) {
      Validations.of(role).acknowledge(
        {
          id: `${stackArnPrefix}stack/${appStackName}/*]`,
          reason:
            'A stack ARN ends in the id CloudFormation gives the stack when it is created; the wildcard stands for ' +
            'that id only, the stack name is fixed.',
        },
        {
          id: `${stackArnPrefix}stack/${appStackName}-*${NESTED_STACK_MARK}*/*]`,
          reason:
            "The app stack's nested stacks: CloudFormation names them after the parent, the nested stack " +
            "resource's logical id (CDK's all contain NestedStackResource) and a random suffix, then the stack id.",
        },
      );
    }

    new CfnOutput(this, 'DeployRoleArn', {
      value: this.deployRole.roleArn,
      description: 'Repository variable AWS_DEPLOY_ROLE_ARN of the deploy workflow',
    });
    new CfnOutput(this, 'DiffRoleArn', {
      value: this.diffRole.roleArn,
      description: 'Repository variable AWS_DIFF_ROLE_ARN of the deploy workflow',
    });
  }
}
