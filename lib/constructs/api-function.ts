/**
 * The house Lambda function: Node.js 22 on arm64, esbuild-bundled ESM (minified, source
 * maps, AWS SDK bundled and tree-shaken), its own log group kept one month, and a role that
 * can write to that log group and nothing else until a `bind*` helper grants more.
 */
import { fileURLToPath } from 'node:url';
import { CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct, IConstruct } from 'constructs';
import { Keys } from '../../functions/store/keys.js';

/** The repository root: bundling resolves entries and node_modules from here, whatever the cwd. */
export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Absolute path of a handler module named from functions/, as lib/routes.ts streamRoute
 * names the event stream: functionEntry('stream/events').
 */
export function functionEntry(handler: string): string {
  return fileURLToPath(new URL(`../../functions/${handler}.ts`, import.meta.url));
}

/** An HTTP handler module, e.g. httpEntry('chats/create'). */
export const httpEntry = (handler: string): string => functionEntry(`http/${handler}`);

/** A job module (invoked by AWS services, not HTTP), e.g. jobEntry('expire-stream'). */
export const jobEntry = (name: string): string => functionEntry(`jobs/${name}`);

/** What every function of the stack gets: the table, the shared environment, the secret if on. */
export interface FunctionWiring {
  table: ITable;
  /** The environment every function gets (service version, instance configuration). */
  environment: Record<string, string>;
  /** When set, the function gets INSTANCE_SECRET_ARN and may read the secret. */
  instanceSecret?: ISecret | undefined;
}

/**
 * How a function may use the table:
 * - `none`: only its name (functions/platform/env.ts requires TABLE_NAME everywhere);
 * - `read`: read data, plus PutItem on the SETTINGS partition only (a read route may create
 *   a generated setting such as the cursor-signing key on first use, settings-repo.ts);
 * - `readWrite`: read and write data.
 */
export type TableAccess = 'none' | 'read' | 'readWrite';

export interface ApiFunctionProps {
  /** Absolute path of the module exporting `handler`. */
  entry: string;
  /** Merged over the house defaults (NODE_OPTIONS); the caller's value wins. */
  environment?: Record<string, string>;
  /** @default 15 seconds */
  timeout?: Duration;
  /** @default 1024 MB */
  memorySize?: number;
  description?: string;
}

/**
 * ESM output still meets CommonJS dependencies that call `require` (Node built-ins inside
 * bundled CJS packages); esbuild's shim needs a real `require` in module scope.
 */
const requireBanner =
  "import { createRequire as __houseCreateRequire } from 'node:module'; const require = __houseCreateRequire(import.meta.url);";

export class ApiFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    // Created beside the function because `this` does not exist before super().
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH });
    // Our own role instead of the default one: the default attaches the managed
    // AWSLambdaBasicExecutionRole (logs:* on every log group); this one may write to its own
    // log group only (granted below).
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });

    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout ?? Duration.seconds(15),
      memorySize: props.memorySize ?? 1024,
      role,
      logGroup,
      projectRoot,
      depsLockFilePath: `${projectRoot}package-lock.json`,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        minify: true,
        keepNames: true,
        sourceMap: true,
        banner: requireBanner,
        // Warnings and errors only (esbuild's default also prints a size table per function).
        logLevel: LogLevel.WARNING,
        // Nothing external: the AWS SDK is bundled (and tree-shaken) rather than taken from
        // the runtime, so the deployed code runs the versions the tests ran.
        externalModules: [],
        // Local esbuild (a devDependency); there is no Docker fallback.
        forceDockerBundling: false,
      },
    });
    logGroup.grantWrite(role);

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the house runtime on purpose: the toolchain pins node@22 (tests and the local runtime run on it) and esbuild targets node22; moving to a newer runtime is one deliberate change of all three.',
    });
  }

  /** Sets TABLE_NAME and grants exactly `access` (see TableAccess), so the two never drift. */
  /** A function with the stack's wiring: its environment, `access` to the table, the secret if on. */
  static wired(scope: Construct, id: string, wiring: FunctionWiring, access: TableAccess, props: Omit<ApiFunctionProps, 'environment'>): ApiFunction {
    const fn = new ApiFunction(scope, id, { ...props, environment: wiring.environment });
    fn.bindTable(wiring.table, access);
    if (wiring.instanceSecret) fn.bindInstanceSecret(wiring.instanceSecret);
    return fn;
  }

  bindTable(table: ITable, access: TableAccess): void {
    this.addEnvironment('TABLE_NAME', table.tableName);
    if (access === 'none') return;
    if (access === 'readWrite') {
      table.grantReadWriteData(this);
    } else {
      table.grantReadData(this);
      this.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['dynamodb:PutItem'],
          resources: [table.tableArn],
          // Keys.setting(...).pk is the SETTINGS partition; keys are spelled only in keys.ts.
          conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [Keys.setting('').pk] } },
        }),
      );
    }
    // grantReadData covers the table's indexes as `<table arn>/index/*`.
    Validations.of(this.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(table)}.Arn>/index/*]`,
      reason:
        'Queries on the global secondary indexes of this table (gsi1..n, listed in lib/table-schema.ts); the wildcard is limited to the indexes of this one table.',
    });
  }

  /** Sets INSTANCE_SECRET_ARN and grants reading that secret (its value is fetched at run time). */
  bindInstanceSecret(secret: ISecret): void {
    this.addEnvironment('INSTANCE_SECRET_ARN', secret.secretArn);
    secret.grantRead(this);
  }
}

/** The logical id of a construct's resource, as cdk-nag names it in findings ("<LogicalId.Arn>"). */
export function logicalIdOf(construct: IConstruct): string {
  const resource = construct.node.defaultChild;
  return resource instanceof CfnElement ? Stack.of(construct).resolve(resource.logicalId) : construct.node.id;
}
