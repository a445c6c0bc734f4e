/**
 * The house Lambda function: Node.js 22 on arm64, esbuild-bundled ESM (minified, split into
 * index.mjs and chunks loaded on first use, AWS SDK bundled and tree-shaken, zod's unused parts
 * and locales left out: lib/constructs/bundle.ts),
 * source maps written beside the bundle but not loaded at init, its own log group kept one
 * month, and a role that can write to that log group and nothing else until a `bind*` helper
 * grants more. A function that makes thumbnails sets `images: true`; what its asset holds beside the
 * bundle (the image runtime, the API document) is function-asset.ts's.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, CfnElement, DockerImage, Duration, Names, Size, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct, IConstruct } from 'constructs';
import { functionAsset, projectRoot } from './function-asset.js';
import { LocalBundle } from './local-bundle.js';
import { Keys, STORED_SECRET_NAMES } from '../../functions/store/keys.js';
import type { GeneratedSecretName, StoredSecretName } from '../../functions/store/keys.js';

/** Absolute path of a handler module named from functions/, e.g. functionEntry('jobs/flush'). */
function functionEntry(handler: string): string {
  return fileURLToPath(new URL(`../../functions/${handler}.ts`, import.meta.url));
}

/** An HTTP handler module, e.g. httpEntry('chats/create'). */
export const httpEntry = (handler: string): string => functionEntry(`http/${handler}`);

/** A job module (invoked by AWS services, not HTTP), e.g. jobEntry('expire-stream'). */
export const jobEntry = (name: string): string => functionEntry(`jobs/${name}`);

/** What every function of the stack gets: the table, the shared environment, whether the secret is on. */
export interface FunctionWiring {
  table: ITable;
  /** The environment every function gets (service version, instance configuration). */
  environment: Record<string, string>;
  /**
   * The instance secret is on (kept in the table's SECRET#INSTANCE item): the functions that check
   * auth (api.ts, event-stream.ts) bind it with bindStoredSecret('INSTANCE'); no other may read it.
   */
  instanceSecret?: boolean | undefined;
}

/**
 * The DynamoDB actions the functions' requests need (store/db.ts sends Get, Query, BatchGet and
 * TransactGet, which IAM authorizes as GetItem per item; Put, Update, Delete, BatchWrite and
 * TransactWrite, authorized per item as Put/Update/Delete/ConditionCheckItem). No Scan,
 * DescribeTable or stream reads, which CDK's grantReadData/grantReadWriteData would add: nothing
 * here scans, and the stream readers get their stream grant from their event source.
 */
export const TABLE_READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
] as const;
export const TABLE_READ_WRITE_ACTIONS = [
  ...TABLE_READ_ACTIONS,
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;

/**
 * Denied on the secrets a function may only read: everything but reading the item (GetItem,
 * BatchGetItem); only the deploy-time maker writes the stored ones (stored-secrets.ts), only the
 * sign-in and sign-out-everywhere routes the session key.
 */
const SECRET_READER_DENIED_ACTIONS = [
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DeleteItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
];

/**
 * How a function may use the table:
 * - `none`: only its name (functions/platform/env.ts requires TABLE_NAME everywhere): the routes
 *   that make no storage call (lib/routes.ts `table: 'none'`);
 * - `config`: GetItem in the SETTINGS partition only, where the live configuration is
 *   (core/instance-config.ts): the routes that read no data (lib/routes.ts `table: 'config'`);
 * - `read`: read data, and write nothing;
 * - `readCursors`: read data, plus PutItem in the cursor-signing key's partition only (a paginating
 *   read route creates the key on first use, store/secrets-repo.ts; lib/routes.ts `cursors`);
 * - `readWrite`: read and write data.
 * Every function with table access gets an explicit Deny on the secrets' partitions (SECRET#,
 * Keys.generatedSecret, secretsDenied) but the ones it uses: `readCursors` the cursor-signing key,
 * and whatever bindStoredSecret names (the instance secret, the origin-verify value, the VAPID pair).
 */
export type TableAccess = 'none' | 'config' | 'read' | 'readCursors' | 'readWrite';

export interface ApiFunctionProps {
  /** Absolute path of the module exporting `handler`. */
  entry: string;
  /**
   * The function's environment. No NODE_OPTIONS by default: --enable-source-maps made every cold
   * start read and parse the source map (45–85 ms); set it here to debug a function.
   */
  environment?: Record<string, string>;
  /** @default 15 seconds */
  timeout?: Duration;
  /** @default 1024 MB */
  memorySize?: number;
  description?: string;
  /**
   * The function imports functions/platform/images.ts (sharp). Its bundle then leaves sharp
   * out and its asset gets sharp's runtime files with the WebAssembly build and no native
   * binary (function-asset.ts imageRuntimePackages), all copied from this machine's
   * node_modules: no network, no Docker. About 12 MB more unzipped; other functions are unchanged.
   *
   * Set by the media routes only: POST /api/v1/chats/{chatId}/media (handler 'media/upload')
   * and the upload-session finalize route (large uploads, ARCHITECTURE.md), both of which
   * decode the image and make its thumbnail in the request (contract §8.4).
   * @default false
   */
  images?: boolean;
  /** /tmp size (MB), for functions that keep files there (the search index's segments). @default 512 */
  ephemeralStorageMb?: number;
  /** Reserved (and maximum) concurrency, e.g. 1 for a single writer. @default unreserved */
  reservedConcurrency?: number;
  /**
   * The function serves the OpenAPI document (lib/routes.ts `apiDocument`): after esbuild the
   * synth writes it as `openapi.json` beside the bundle (lib/openapi/write.ts, from the route
   * table and every handler's schemas), and `reference` also copies Swagger UI's browser
   * bundle and stylesheet (about 1.9 MB) into the asset's node_modules.
   * @default none
   */
  apiDocument?: 'document' | 'reference';
}

export class ApiFunction extends LambdaFunction {
  /** The SECRET# partitions this function may reach (readCursors, bindStoredSecret). */
  private readonly secretsAllowed = new Set<GeneratedSecretName>();
  /** Its Deny on every other SECRET# partition (bindTable), kept to add exceptions to. */
  private secretsDeny: PolicyStatement | undefined;
  /** Its Deny on anything but reading the secrets it may only read (bindStoredSecret, bindSessionKey 'check'). */
  private secretsReadOnly: PolicyStatement | undefined;
  private readonly readOnlySecrets = new Set<GeneratedSecretName>();

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    // Created beside the function because `this` does not exist before super().
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH });
    // Our own role instead of the default one: the default attaches the managed
    // AWSLambdaBasicExecutionRole (logs:* on every log group); this one may write to its own
    // log group only (granted below).
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });

    const asset = functionAsset(props);

    super(scope, id, {
      // Nothing external but sharp for an images function: the AWS SDK is bundled (and
      // tree-shaken) rather than taken from the runtime, so the deployed code runs the versions
      // the tests ran; an images function loads sharp from files beside it (function-asset.ts).
      code: Code.fromAsset(projectRoot, {
        // The asset is identified by the bundle (the source folder is the whole project).
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          local: new LocalBundle(scope, { entry: props.entry, ...asset }, projectRoot),
          // Never used: local bundling answers or fails the synth; there is no Docker fallback.
          image: DockerImage.fromRegistry('local-bundling-only'),
          command: ['lib/constructs/bundle.ts', relative(projectRoot, props.entry)],
        },
      }),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout ?? Duration.seconds(15),
      memorySize: props.memorySize ?? 1024,
      // JSON logs, and Lambda's own START/END/REPORT lines only at WARN: three lines per
      // invocation would cost more CloudWatch ingestion than the application's sampled ones
      // (the duration and error metrics are unaffected). The application's level: POWERTOOLS_LOG_LEVEL.
      loggingFormat: LoggingFormat.JSON,
      systemLogLevelV2: SystemLogLevel.WARN,
      ...(props.ephemeralStorageMb ? { ephemeralStorageSize: Size.mebibytes(props.ephemeralStorageMb) } : {}),
      ...(props.reservedConcurrency ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      role,
      logGroup,
      environment: { ...props.environment },
    });
    logGroup.grantWrite(role);

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the house runtime on purpose: the toolchain pins node@22 (tests and the local runtime run on ' +
        'it) and esbuild targets node22; moving to a newer runtime is one deliberate change of all three.',
    });
  }

  /** A function with the stack's wiring: its environment and `access` to the table (no secret: bindStoredSecret). */
  static wired(
    scope: Construct,
    id: string,
    wiring: FunctionWiring,
    access: TableAccess,
    props: Omit<ApiFunctionProps, 'environment'>,
  ): ApiFunction {
    const fn = new ApiFunction(scope, id, { ...props, environment: wiring.environment });
    fn.bindTable(wiring.table, access);
    return fn;
  }

  /** Sets TABLE_NAME and grants exactly `access` (see TableAccess), so the two never drift. */
  bindTable(table: ITable, access: TableAccess): void {
    this.addEnvironment('TABLE_NAME', table.tableName);
    // Keys.setting(...).pk is the SETTINGS partition; keys are spelled only in keys.ts.
    const settingsOnly = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [Keys.setting('').pk] } };
    const cursorKeyOnly = {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [Keys.generatedSecret('CURSOR').pk] },
    };
    if (access === 'none') return;
    if (access === 'readCursors') this.secretsAllowed.add('CURSOR');
    this.secretsDeny = secretsDenied(table);
    this.addToRolePolicy(this.secretsDeny);
    this.exceptAllowedSecrets();
    if (access === 'config') {
      this.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['dynamodb:GetItem'],
          resources: [table.tableArn],
          conditions: settingsOnly,
        }),
      );
      return;
    }
    table.grant(this, ...(access === 'readWrite' ? TABLE_READ_WRITE_ACTIONS : TABLE_READ_ACTIONS));
    // A wrong instance secret is counted (core/secret-guesses.ts) on read-only routes too: the window counter.
    if (access !== 'readWrite') {
      const counter = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [Keys.signInFailures('*').pk] } };
      this.addToRolePolicy(
        new PolicyStatement({ actions: ['dynamodb:UpdateItem'], resources: [table.tableArn], conditions: counter }),
      );
    }
    if (access === 'readCursors') {
      this.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['dynamodb:PutItem'],
          resources: [table.tableArn],
          conditions: cursorKeyOnly,
        }),
      );
    }
    // Table.grant covers the table's indexes as `<table arn>/index/*`.
    Validations.of(this.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${arnInFinding(this, table)}/index/*]`,
      reason:
        'Queries on the global secondary indexes of this table (gsi1..n, listed in lib/table-schema.ts); the ' +
        'wildcard is limited to the indexes of this one table.',
    });
  }

  /**
   * Lets the function read one stored secret (store/secrets-repo.ts storedSecret): STORED_SECRETS
   * names it, GetItem/BatchGetItem are allowed in its partition only, and the Deny on the SECRET#
   * partitions (bindTable) excepts it. Call after bindTable (ApiFunction.wired does).
   */
  bindStoredSecret(table: ITable, name: StoredSecretName): void {
    this.secretsAllowed.add(name);
    const stored = STORED_SECRET_NAMES.filter((n) => this.secretsAllowed.has(n));
    this.addEnvironment('STORED_SECRETS', stored.join(','));
    this.allowInSecret(table, name, ['dynamodb:BatchGetItem', 'dynamodb:GetItem']);
    // Reading the item is all: the exception must not let a read-write role change or query it.
    this.readOnly(table, name);
  }

  /**
   * Lets the function use the session-signing key (store/secrets-repo.ts sessionKey, SECRET#SESSION):
   * `check` reads it (every function that checks auth: a session cookie is a credential, contract
   * §1.11.1), `sign` may also create it on first use (PutItem: the sign-in route). Both may read and
   * renew the session records (Keys.session, GetItem and UpdateItem in their partition: a function
   * that reads only its configuration, or no data, checks a session too). Call after bindTable.
   */
  bindSessionKey(table: ITable, use: 'check' | 'sign'): void {
    this.secretsAllowed.add('SESSION');
    this.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [Keys.sessions.pk] } },
      }),
    );
    if (use === 'check') {
      this.allowInSecret(table, 'SESSION', ['dynamodb:BatchGetItem', 'dynamodb:GetItem']);
      this.readOnly(table, 'SESSION');
      return;
    }
    this.allowInSecret(table, 'SESSION', ['dynamodb:GetItem', 'dynamodb:PutItem']);
    // Getting and putting the item is all (a read-write role must not query, update or delete it).
    this.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.DENY,
        actions: SECRET_READER_DENIED_ACTIONS.filter((action) => action !== 'dynamodb:PutItem'),
        resources: [table.tableArn],
        conditions: { 'ForAnyValue:StringEquals': { 'dynamodb:LeadingKeys': [Keys.generatedSecret('SESSION').pk] } },
      }),
    );
  }

  /** Allows `actions` in one secret's partition only, and excepts it from the Deny on the SECRET# partitions. */
  private allowInSecret(table: ITable, name: GeneratedSecretName, actions: string[]): void {
    this.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions,
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [Keys.generatedSecret(name).pk] } },
      }),
    );
    this.exceptAllowedSecrets();
  }

  /** Denies everything but reading the secret's item (a read-write role must not change or query it). */
  private readOnly(table: ITable, name: GeneratedSecretName): void {
    this.readOnlySecrets.add(name);
    if (!this.secretsReadOnly) {
      this.secretsReadOnly = new PolicyStatement({
        effect: Effect.DENY,
        actions: SECRET_READER_DENIED_ACTIONS,
        resources: [table.tableArn],
      });
      this.addToRolePolicy(this.secretsReadOnly);
    }
    const pks = [...this.readOnlySecrets].sort().map((n) => Keys.generatedSecret(n).pk);
    this.secretsReadOnly.addCondition('ForAnyValue:StringEquals', { 'dynamodb:LeadingKeys': pks });
  }

  /**
   * The Deny applies to a request naming a SECRET# partition (ForAnyValue:StringLike) and any
   * partition outside the allowed ones (ForAnyValue:StringNotEquals): a request naming allowed
   * secrets only passes it; one naming another secret, or mixing a secret with other keys, is denied.
   */
  private exceptAllowedSecrets(): void {
    if (!this.secretsDeny || this.secretsAllowed.size === 0) return;
    const allowed = [...this.secretsAllowed].sort().map((name) => Keys.generatedSecret(name).pk);
    this.secretsDeny.addCondition('ForAnyValue:StringNotEquals', { 'dynamodb:LeadingKeys': allowed });
  }
}

/**
 * Denies every DynamoDB action on the secrets' partitions (Keys.generatedSecretsPattern) of `table`
 * and its indexes, whatever else the role is allowed; ApiFunction adds the exception of the
 * partitions the function uses (exceptAllowedSecrets: ForAnyValue:StringNotEquals). Why a Deny with
 * `ForAnyValue:StringLike` on `dynamodb:LeadingKeys`, and why it is sound here:
 * - an explicit Deny wins over any Allow, including one added later (CDK's grantReadData...);
 * - IAM sets LeadingKeys to the partition key values a request names: GetItem, PutItem, UpdateItem,
 *   DeleteItem, ConditionCheckItem and Query carry one; BatchGetItem and BatchWriteItem carry all of
 *   the batch's, so one secret item among them denies the whole batch (ForAnyValue); TransactGetItems
 *   and TransactWriteItems are authorized item by item as GetItem/PutItem/UpdateItem/DeleteItem/
 *   ConditionCheckItem, each with its own key;
 * - a Query on an index carries the index's partition key, never SECRET#: the secrets are never
 *   given index attributes (keys.ts), so no index holds them;
 * - ForAnyValue is false when the request has no LeadingKeys (Scan, PartiQL): those actions are
 *   granted to no function (TABLE_READ_ACTIONS), so nothing reaches a secret through them either.
 * The alternative, a condition on every Allow (`ForAllValues:StringNotLike`), would be true for a
 * request with no LeadingKeys too, and would have to be repeated on each grant.
 */
export function secretsDenied(table: ITable): PolicyStatement {
  return new PolicyStatement({
    effect: Effect.DENY,
    actions: ['dynamodb:*'],
    resources: [table.tableArn, `${table.tableArn}/index/*`],
    conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [Keys.generatedSecretsPattern] } },
  });
}

/** The logical id of a construct's resource, as cdk-nag names it in findings ("<LogicalId.Arn>"). */
export function logicalIdOf(construct: IConstruct): string {
  const resource = construct.node.defaultChild;
  return resource instanceof CfnElement ? Stack.of(construct).resolve(resource.logicalId) : construct.node.id;
}

/**
 * The ARN of `target` as cdk-nag writes it in a finding on a resource of `from`'s stack (for an
 * acknowledgement's id): `<LogicalId.Arn>` in the same template; in a nested stack (an API area,
 * api-area.ts), the parameter CDK passes it through, `<referenceto<unique id of target>Arn>`.
 */
export function arnInFinding(from: IConstruct, target: IConstruct): string {
  const resource = target.node.defaultChild ?? target;
  const producer = Stack.of(resource);
  const consumer = Stack.of(from);
  if (producer === consumer) return `<${logicalIdOf(target)}.Arn>`;
  if (consumer.nestedStackParent === producer) return `<referenceto${Names.nodeUniqueId(resource.node)}Arn>`;
  throw new Error(`${from.node.path} refers to ${target.node.path} across stacks CDK does not nest that way.`);
}
