/**
 * The CDK app: reads the instance configuration (contract §12) from `-c configPath=…` or
 * CONFIG_PATH (none → defaults), applies the §12.2 deployment overrides from the environment,
 * validates it, and builds the `ChatRelay` stack checked by cdk-nag's AwsSolutions pack.
 *
 *   npx cdk synth                                        # defaults, offline, no credentials
 *   npx cdk deploy -c configPath=./config.json       # secrets: made in the table
 *                                                    # (docs/deployment.md, "Secrets in the table")
 *                  [-c domainName=relay.example.com -c certificateArn=arn:aws:acm:us-east-1:…]
 *                  [-c webDir=PATH]           # another static web app build (default: web/dist, built when stale)
 *                  [-c allowOpenAccess=true]                          # no instance secret (warned)
 *                  [-c apiThrottleRate=50 -c apiThrottleBurst=100]    # API Gateway stage throttle
 *                  [-c alarmTopicArn=arn:aws:sns:… | -c alarmEmail=ops@example.com]
 *                  [-c withoutAlarms=true]                            # no CloudWatch alarm (warned)
 *   npx cdk deploy ChatRelayDeployRole -c githubRepository=owner/name [-c githubBranch=main]
 *                  [-c githubOidcProviderArn=…]                      # CI roles, once
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { ConfigValidationError, resolveConfig } from '../functions/platform/instance-config.js';
import type { InstanceConfig } from '../functions/platform/instance-config.js';
import { DEPLOY_TIME_VAPID_KEY, DeploymentConfigError } from '../lib/deployment-inputs.js';
import { WebDirError, resolveWebDir } from '../lib/web-build.js';
import { WEB_BUILD_DIR } from '../lib/web-policy.js';

/** Stops the synth with one readable line instead of a stack trace. */
function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

function contextString(app: App, key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') fail(`Context "${key}" must be a string.`);
  return value;
}

/** A number given on the command line (a string) or in cdk.json (a number); the stack validates it. */
function contextNumber(app: App, key: string): string | number | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (typeof value === 'number') return value;
  return contextString(app, key);
}

/** A yes/no context value: `-c name=true` (a string on the command line, a boolean in cdk.json). */
function contextFlag(app: App, key: string): boolean {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '' || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  fail(`Context "${key}" must be true or false.`);
}

function readRawConfig(path: string | undefined): unknown {
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    fail(`Cannot read the instance configuration "${path}": ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(`The instance configuration "${path}" is not valid JSON: ${(error as Error).message}`);
  }
}

function loadConfig(app: App): InstanceConfig {
  const raw = readRawConfig(contextString(app, 'configPath') ?? process.env.CONFIG_PATH);
  try {
    return resolveConfig(raw, {
      OPENGRAM_INSTANCE_SECRET: process.env.OPENGRAM_INSTANCE_SECRET,
      OPENGRAM_PUBLIC_BASE_URL: process.env.OPENGRAM_PUBLIC_BASE_URL,
      OPENGRAM_CORS_ORIGINS: process.env.OPENGRAM_CORS_ORIGINS,
      OPENGRAM_SERVER_PORT: process.env.OPENGRAM_SERVER_PORT,
      // With push enabled and no key pair named, the deploy makes one (lib/constructs/web-push.ts).
      VAPID_PUBLIC_KEY: DEPLOY_TIME_VAPID_KEY,
    });
  } catch (error) {
    if (error instanceof ConfigValidationError) fail(error.message);
    throw error;
  }
}

/** `-c domainName=… -c certificateArn=…`: a custom name for the base URL (both or neither). */
function loadDomain(app: App): { name: string; certificateArn: string } | undefined {
  const name = contextString(app, 'domainName');
  const certificateArn = contextString(app, 'certificateArn');
  if (!name && !certificateArn) return undefined;
  if (!name || !certificateArn)
    fail('Give both -c domainName and -c certificateArn (an ACM certificate in us-east-1), or neither.');
  return { name, certificateArn };
}

/** `-c webDir=PATH`, or our own build (made or refreshed when a web source is newer). */
function loadWebDir(app: App): string {
  try {
    return resolveWebDir(fileURLToPath(new URL('..', import.meta.url)), contextString(app, 'webDir'));
  } catch (error) {
    fail(error instanceof WebDirError ? error.message : `Cannot build the web app: ${(error as Error).message}`);
  }
}

const app = new App();
// The stack's secrets live in its table now (lib/constructs/stored-secrets.ts): no Secrets Manager ARNs.
for (const removed of ['instanceSecretArn', 'vapidKeysSecretArn']) {
  if (contextString(app, removed)) {
    fail(
      `-c ${removed} is gone: the stack keeps its secrets in its table. Put your own value in the SECRET# item ` +
        'after deploying (docs/deployment.md, "Secrets in the table").',
    );
  }
}
const config = loadConfig(app);
// Every other input is read and checked before the stacks' code loads (about 2 s of it, with
// cdk-nag's rules): a bad `-c` stops the synth in a fraction of a second. The web build comes
// last, as it may run Vite.
const stackInputs = {
  config,
  domain: loadDomain(app),
  logLevel: contextString(app, 'logLevel'),
  logSampleRate: contextString(app, 'logSampleRate'),
  allowOpenAccess: contextFlag(app, 'allowOpenAccess'),
  apiThrottleRate: contextNumber(app, 'apiThrottleRate'),
  apiThrottleBurst: contextNumber(app, 'apiThrottleBurst'),
  alarmTopicArn: contextString(app, 'alarmTopicArn'),
  alarmEmail: contextString(app, 'alarmEmail'),
  withoutAlarms: contextFlag(app, 'withoutAlarms'),
};
// The CI deploy's roles (docs/deployment.md, "Deploying from CI"): only when a repository is
// named, and deployed by name, once: npx cdk deploy ChatRelayDeployRole -c githubRepository=owner/name
const repository = contextString(app, 'githubRepository');
const deployRole = repository && {
  repository,
  branch: contextString(app, 'githubBranch'),
  appStackName: 'ChatRelay',
  oidcProviderArn: contextString(app, 'githubOidcProviderArn'),
};
const webDir = loadWebDir(app);
const [{ ChatRelayStack }, { DeployRoleStack, checkDeployRoleInputs }, { AwsSolutionsChecks }] = await Promise.all([
  import('../lib/stack.js'),
  import('../lib/deploy-role-stack.js'),
  import('cdk-nag'),
]);
try {
  if (deployRole) checkDeployRoleInputs(app, deployRole);
  new ChatRelayStack(app, 'ChatRelay', {
    ...stackInputs,
    webDir,
    // Another build (OpenGram's UI, …): its CSP allows inline styles (lib/web-policy.ts).
    foreignBuild: resolve(webDir) !== resolve(fileURLToPath(new URL('..', import.meta.url)), WEB_BUILD_DIR),
  });
  if (deployRole) new DeployRoleStack(app, 'ChatRelayDeployRole', deployRole);
} catch (error) {
  // Inputs the stack cannot deploy (secret ARN format, size, a config needing a stripped secret).
  if (error instanceof DeploymentConfigError) fail(error.message);
  throw error;
}
// cdk-nag 3 is a policy-validation plugin (it replaced v2's Aspect): findings are reported
// when the app synthesizes, errors fail the synth, and acknowledgements live beside the
// constructs they concern (Validations.of(construct).acknowledge).
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
