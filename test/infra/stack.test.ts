/**
 * Assertions on the synthesized ChatRelay template. The full synth (esbuild bundling of every
 * function) runs once, in beforeAll, and every test below shares it; the instance-secret
 * tests synthesize their own variants without bundling, which costs about a second each.
 * The stream-timeout state machine, the event stream's function URL and the dispatch queues
 * are checked here too, so they share that one synth.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CfnResource, Stack } from 'aws-cdk-lib';
import { DEFAULT_TIMING } from '../../functions/core/event-stream.js';
import { QUEUE_RETENTION_SECONDS } from '../../functions/platform/queues.js';
import { CHECK_MAX_RECEIVES } from '../../functions/platform/stream-timer.js';
import { FLUSH_MAX_RECEIVES } from '../../lib/constructs/dispatch-queues.js';
import { mediaUploadCode } from '../../lib/constructs/media-bucket.js';
import { CHECK_TIMEOUT } from '../../lib/constructs/stream-timeouts.js';
import { MEDIA_UPLOAD_PATH } from '../../lib/web-policy.js';
import { areaStackId } from '../../lib/constructs/api-area.js';
import { DeployRoleStack } from '../../lib/deploy-role-stack.js';
import {
  API_AREAS,
  IMAGE_MEMORY_MB,
  apiRoutes,
  authClassOf,
  fallbackHandler,
  routeId,
  routes,
  streamRoute,
} from '../../lib/routes.js';
import type { RouteSpec } from '../../lib/routes.js';
import { API_PATH_PATTERN, viewerHostCode } from '../../lib/constructs/edge.js';
import { DEPLOYMENT_MEMORY_MB, HASHED_ASSETS_FILTER, spaFallbackCode } from '../../lib/constructs/web-hosting.js';
import { HASHED_CACHE_CONTROL, UNHASHED_CACHE_CONTROL, webSecurityHeaders } from '../../lib/web-policy.js';
import { tableSchema } from '../../lib/table-schema.js';
import type { IndexSchema } from '../../lib/table-schema.js';
import { resolveConfig } from '../../functions/platform/instance-config.js';
import { Keys } from '../../functions/store/keys.js';
import {
  DeploymentConfigError,
  INSTANCE_CONFIG_MAX_BYTES,
  apiThrottle,
  closedConfig,
  deployableConfig,
  loggingEnvironment,
} from '../../lib/deployment-inputs.js';
import {
  actionsOf,
  cdkPath,
  joinedString,
  refId,
  resourcesOf,
  resourcesOfType,
  routeFunctionPath,
  statementsOfRole,
  synthesize,
  validationViolations,
  validatingApp,
  NO_STACK_TRACES,
  FIXTURE_WEB_DIR,
  isDeployTimePath,
} from './synth.js';
import type { CfnTemplate, PolicyStatementJson, Synthesized } from './synth.js';
import { ACCESS_LOG_BYTES, FIXED } from '../bench/cost/operations.js';
import {
  TEMPLATE_DIRECT_BYTES,
  TEMPLATE_RESOURCE_CEILING,
  marginsTable,
  quotaMargins,
  resolvedBound,
} from './quotas.js';
import type { Margin } from './quotas.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

const routeKey = (route: { method: string; path: string }) => `${route.method} ${route.path}`;
const functionPathOf = routeFunctionPath;
const expiryFunctionPath = 'ChatRelay/StreamTimeouts/ExpireStream/Resource';
const streamFunctionPath = 'ChatRelay/EventStream/Events/Resource';
const flushFunctionPath = 'ChatRelay/Dispatch/Flush/Resource';
const sweepFunctionPath = 'ChatRelay/Dispatch/Sweep/Resource';
const tagSweepFunctionPath = 'ChatRelay/Tags/Sweep/Resource';
/** The stored secrets' deploy-time maker (lib/constructs/stored-secrets.ts). */
const makerPath = 'ChatRelay/Secrets/Maker/Resource';
const searchWriterPath = 'ChatRelay/Search/Writer/Resource';
const effectsPath = 'ChatRelay/Effects/Consumer/Resource';
const expectedFunctionPaths = [
  ...apiRoutes.map((r) => functionPathOf(routeId(r))),
  functionPathOf('Fallback'),
  expiryFunctionPath,
  streamFunctionPath,
  flushFunctionPath,
  sweepFunctionPath,
  tagSweepFunctionPath,
  searchWriterPath,
  effectsPath,
];
/**
 * Functions besides the routes': the fallback, the stream expiry function, the event stream, the flush
 * consumer (which also runs the stream checks), the dispatch and tag sweepers, the search index writer
 * and the consumer of events' side effects (push, webhooks, auto-rename).
 */
const extraFunctions = 8;

/** Unacknowledged AwsSolutions findings as "rule at path" lines (empty when clean). */
function nagFindings(stack: Stack): string[] {
  const report = new AwsSolutionsChecks().validateScope(stack);
  return report.violations.flatMap((v) =>
    v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath ?? '?'}`),
  );
}

interface FunctionInfo {
  id: string;
  path: string;
  props: Record<string, any>;
  roleId: string;
  statements: PolicyStatementJson[];
}

/** The deploy-time functions, apart (synth.ts DEPLOY_TIME_PREFIXES). */
const isDeployTime = (fn: FunctionInfo) => isDeployTimePath(fn.path);

function allFunctionsOf(json: CfnTemplate): FunctionInfo[] {
  return resourcesOfType(json, 'AWS::Lambda::Function').map(([id, fn]) => {
    const roleId = refId(fn.Properties?.Role)!;
    return { id, path: cdkPath(fn), props: fn.Properties ?? {}, roleId, statements: statementsOfRole(json, roleId) };
  });
}

/** The functions that serve the API and its jobs (not the deploy-time ones). */
const functionsOf = (json: CfnTemplate): FunctionInfo[] => allFunctionsOf(json).filter((fn) => !isDeployTime(fn));

/** Route key → logical id of the function its integration invokes. */
function routeTargets(json: CfnTemplate): Map<string, string> {
  const targets = new Map<string, string>();
  for (const [, route] of resourcesOfType(json, 'AWS::ApiGatewayV2::Route')) {
    const join = route.Properties?.Target['Fn::Join'][1] as unknown[];
    const integration = json.Resources[refId(join[1])!]!;
    targets.set(route.Properties?.RouteKey as string, refId(integration.Properties?.IntegrationUri)!);
  }
  return targets;
}

/** The statements that grant (Deny statements are checked apart: "generated secrets"). */
const allows = (statements: PolicyStatementJson[]) => statements.filter((s) => s.Effect === 'Allow');

const dynamoActions = (statements: PolicyStatementJson[]) =>
  statements.flatMap(actionsOf).filter((action) => action.startsWith('dynamodb:'));

/** The grant on the browser-session records (Keys.session) every function that checks auth gets. */
const sessionsOnly = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [Keys.sessions.pk] } };
const sessionRecordGrant = (tableArn: unknown) => ({
  Effect: 'Allow',
  Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
  Resource: tableArn,
  Condition: sessionsOnly,
});
/** The grant on the clients' failed-secret counters (Keys.signInFailures) every function reading the table but no writer gets. */
const guessCounterOnly = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RL#*'] } };
const guessCounterGrant = (tableArn: unknown) => ({
  Effect: 'Allow',
  Action: 'dynamodb:UpdateItem',
  Resource: tableArn,
  Condition: guessCounterOnly,
});
/** Allow statements but the session records' and the failed-secret counters' grants. */
const tableAllows = (statements: PolicyStatementJson[]) =>
  allows(statements).filter(
    (st) => ![sessionsOnly, guessCounterOnly].some((c) => JSON.stringify(st.Condition) === JSON.stringify(c)),
  );

let main: Synthesized;
let fns: FunctionInfo[];
let tableId: string;
let stateMachineId: string;
const fnAt = (id: string) => fns.find((f) => f.path === functionPathOf(id))!;
/** The secrets the stored-secrets custom resource makes in the table (lib/constructs/stored-secrets.ts). */
const storedSecretNamesOf = (json: CfnTemplate) =>
  resourcesOfType(json, 'Custom::StoredSecrets').flatMap(([, r]) => r.Properties?.Secrets as string[]);

beforeAll(() => {
  main = synthesize({ bundle: true, validate: true });
  fns = functionsOf(main.json);
  tableId = resourcesOfType(main.json, 'AWS::DynamoDB::Table')[0]![0];
  stateMachineId = resourcesOfType(main.json, 'AWS::StepFunctions::StateMachine')[0]?.[0] ?? '(none)';
}, 300_000);

afterAll(() => main?.dispose());

describe("CloudFormation validation (the CDK's built-in validator, as `cdk synth` runs it with cdk.json)", () => {
  it("finds nothing in the stack's templates: every resource matches its schema and the default rules", () => {
    expect(validationViolations(main.outdir)).toEqual([]);
  });

  it("finds nothing in the deploy role stack's template (-c deployRole)", () => {
    const outdir = mkdtempSync(join(tmpdir(), 'chat-relay-deploy-role-'));
    try {
      const app = validatingApp(outdir);
      new DeployRoleStack(app, 'ChatRelayDeployRole', { repository: 'acme/chat-relay', appStackName: 'ChatRelay' });
      app.synth();
      expect(validationViolations(outdir)).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });

  it("fails the synth on a violation, by cdk.json's context (the CDK alone only warns)", () => {
    const outdir = mkdtempSync(join(tmpdir(), 'chat-relay-invalid-'));
    try {
      const app = validatingApp(outdir);
      const stack = new Stack(app, 'Invalid');
      new CfnResource(stack, 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } });
      expect(() => app.synth()).toThrow(/VisibilityTimeout: 'soon' is not of type 'integer'/);
      expect(validationViolations(outdir)).toEqual([
        expect.stringMatching(
          /^CloudFormation Validate error \w+ at Invalid\/Queue: VisibilityTimeout: 'soon' is not of type 'integer'$/,
        ),
      ]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('AWS quotas (a preflight: a deploy that would fail on one fails here)', () => {
  let margins: Margin[];
  beforeAll(() => {
    margins = quotaMargins(main);
    console.log(
      `AWS quotas, largest value against limit (template over ${TEMPLATE_DIRECT_BYTES} bytes goes through S3):\n` +
        marginsTable(margins),
    );
  });

  it('measures every quota of quotas.ts on this stack, each within its limit', () => {
    const over = margins.filter((m) => m.value > m.limit).map((m) => `${m.quota}: ${m.value} > ${m.limit} at ${m.at}`);
    expect(over).toEqual([]);
    expect(margins.length).toBeGreaterThanOrEqual(20);
  });

  it("stays within CloudFormation's 500 resources in every template (cdk synth passes beyond it; the deploy fails), with room to spare", () => {
    // The root and one nested stack per area of the API (templates.test.ts: the room for more routes).
    const counts = main.templates.map((t) => Object.keys(t.json.Resources).length);
    console.log(`resources per template: ${main.templates.map((t, i) => `${t.path} ${counts[i]}`).join(', ')}`);
    const largest = Math.max(...counts);
    expect(margins.find((m) => m.quota.startsWith('CloudFormation resources'))).toMatchObject({ value: largest });
    expect(largest).toBeLessThanOrEqual(TEMPLATE_RESOURCE_CEILING);
    // The flattened stack the other tests read holds every template's resources but the nested stacks' own.
    const nestedStacks = main.templates.length - 1;
    expect(Object.keys(main.json.Resources)).toHaveLength(counts.reduce((a, b) => a + b, 0) - nestedStacks);
  });

  it('measured what it claims: every function asset, every role, every function environment', () => {
    const assets = margins.find((m) => m.quota.startsWith('Lambda unzipped'))!;
    // The largest asset is an image route's (sharp's WebAssembly build beside the bundle).
    expect(assets.value).toBeGreaterThan(1_000_000);
    expect(assets.at).toMatch(/^ChatRelay\/Api\//);
    const roles = margins.find((m) => m.quota.startsWith("IAM characters of a role's"))!;
    expect(roles.value).toBeGreaterThan(1000);
    const env = margins.find((m) => m.quota.startsWith('Lambda environment'))!;
    expect(env.at).toBe(flushFunctionPath);
  });

  it('bounds what CloudFormation resolves a reference to, and refuses a reference it cannot bound', () => {
    const table = refId({ Ref: tableId })!;
    expect(String(resolvedBound(main.json, 'ChatRelay', { 'Fn::GetAtt': [table, 'Arn'] }))).toMatch(
      /^arn:aws-us-gov:dynamodb:x{16}:123456789012:table\/ChatRelay-/,
    );
    expect(() => resolvedBound(main.json, 'ChatRelay', { 'Fn::Select': [0, ['a']] })).toThrow(/no bound/);
    expect(() => resolvedBound(main.json, 'ChatRelay', { Ref: 'NoSuchResource' })).toThrow(/no bound/);
  });
});

describe('HTTP API', () => {
  it(
    'has one function per route of lib/routes.ts plus the fallback (and the stream expiry, event stream and flush ' +
      'functions), and no other',
    () => {
      expect(fns.map((f) => f.path).sort()).toEqual([...expectedFunctionPaths].sort());
      expect(fns).toHaveLength(apiRoutes.length + extraFunctions);
      // Besides them, at deploy time only: the stored secrets' maker, the Provider framework's function
      // and the web app deployment's copier.
      const deployTime = allFunctionsOf(main.json).filter(isDeployTime);
      expect(deployTime.map((f) => f.path).sort()).toEqual([
        `ChatRelay/Custom::CDKBucketDeployment8693BB64968944B69AAFB0CC9EB8756C${DEPLOYMENT_MEMORY_MB}MiB/Resource`,
        makerPath,
        'ChatRelay/Secrets/Provider/framework-onEvent/Resource',
      ]);
    },
  );

  it('has exactly the route keys of the route table plus $default', () => {
    const keys = resourcesOfType(main.json, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties?.RouteKey);
    expect(keys.sort()).toEqual([...apiRoutes.map(routeKey), '$default'].sort());
  });

  it('sends every route to its own function and $default to the fallback', () => {
    const targets = routeTargets(main.json);
    const pathOfFunction = (logicalId: string | undefined) => cdkPath(main.json.Resources[logicalId ?? '']!);
    for (const route of apiRoutes) {
      expect([routeKey(route), pathOfFunction(targets.get(routeKey(route)))]).toEqual([
        routeKey(route),
        functionPathOf(routeId(route)),
      ]);
    }
    expect(fallbackHandler).toBe('fallback');
    expect(pathOfFunction(targets.get('$default'))).toBe(functionPathOf('Fallback'));
  });

  it('leaves CORS to the functions (no API Gateway CORS answering preflight itself)', () => {
    const apis = resourcesOfType(main.json, 'AWS::ApiGatewayV2::Api');
    expect(apis).toHaveLength(1);
    expect(apis[0]![1].Properties?.CorsConfiguration).toBeUndefined();
  });

  it('logs access on the $default stage without the query string (it may carry ?token=)', () => {
    const stages = resourcesOfType(main.json, 'AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(1);
    const stage = stages[0]![1].Properties ?? {};
    expect(stage.StageName).toBe('$default');
    expect(stage.AutoDeploy).toBe(true);
    const logGroup = main.json.Resources[refId(stage.AccessLogSettings.DestinationArn)!];
    expect(logGroup?.Type).toBe('AWS::Logs::LogGroup');
    const format = JSON.parse(stage.AccessLogSettings.Format) as Record<string, string>;
    expect(format.requestId).toBe('$context.requestId');
    expect(Object.values(format).join(' ')).not.toMatch(/querystring|rawQueryString|\$context\.identity\.apiKey/i);
    // Every request writes a line, unsampled: the cheaper log class, and a line the cost model prices.
    expect(logGroup?.Properties?.LogGroupClass).toBe('INFREQUENT_ACCESS');
    const sample: Record<string, string> = {
      '$context.requestId': 'Xy1AbCdEfGhIjKlM=',
      '$context.identity.sourceIp': '2001:db8:85a3::8a2e:370:7334',
      '$context.identity.userAgent':
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0',
      '$context.routeKey': 'POST /api/v1/messages/{messageId}/chunks',
      '$context.path': '/api/v1/messages/k2Jd8Qw0PzX7nB4cV9sLm/chunks',
      '$context.status': '200',
      '$context.responseLength': '390',
      '$context.responseLatency': '23',
      '$context.integrationErrorMessage': '-',
    };
    const lineBytes = (values: Record<string, string>) =>
      Buffer.byteLength(
        JSON.stringify(Object.fromEntries(Object.entries(format).map(([k, v]) => [k, values[v] ?? v]))),
      );
    expect(Object.values(format).every((v) => v in sample)).toBe(true);
    expect(lineBytes(sample)).toBeLessThanOrEqual(ACCESS_LOG_BYTES.browser);
    // An agent's (Node's fetch sends the user agent `node`), from an IPv4 address.
    const agent = { ...sample, '$context.identity.sourceIp': '203.0.113.254', '$context.identity.userAgent': 'node' };
    expect(lineBytes(agent)).toBeLessThanOrEqual(ACCESS_LOG_BYTES.agent);
  });

  it(
    'outputs the base URL, the API URL, the events URL, the table name, the media and web buckets, the state ' +
      'machine ARN, the dispatch queues and the instance secret (on by default)',
    () => {
      expect(Object.keys(main.json.Outputs ?? {}).sort()).toEqual([
        'ApiUrl',
        'BaseUrl',
        'DispatchDeadLetterQueueName',
        'DispatchQueueUrl',
        'EventsUrl',
        'FlushDeadLetterQueueName',
        'FlushQueueUrl',
        'InstanceSecretCommand',
        'MediaBucketName',
        'SearchIndexBucketName',
        'StreamDeadLetterQueueName',
        'StreamTimeoutStateMachineArn',
        'TableName',
        'WebBucketName',
      ]);
      expect(refId(main.json.Outputs?.TableName?.Value)).toBe(tableId);
      expect(main.json.Outputs?.StreamTimeoutStateMachineArn?.Value).toEqual({ Ref: stateMachineId });
    },
  );
});

describe('functions', () => {
  it(
    "run Node.js 22 on arm64 with 1024 MB (image routes IMAGE_MEMORY_MB), 15 s (or their route's timeoutSeconds; " +
      'the flush consumer 30 s), without NODE_OPTIONS: source maps are not loaded at init ' +
      '(the event stream: see its ' +
      'own test)',
    () => {
      const timeouts = new Map<string, number>(
        apiRoutes.map((r) => [functionPathOf(routeId(r)), r.timeoutSeconds ?? 15]),
      );
      const imagePaths = new Set(apiRoutes.filter((r) => r.images).map((r) => functionPathOf(routeId(r))));
      expect(imagePaths.size).toBe(2);
      timeouts.set(flushFunctionPath, 30);
      timeouts.set(sweepFunctionPath, 30);
      timeouts.set(searchWriterPath, 300);
      timeouts.set(effectsPath, 300);
      const memories = new Map<string, number>(
        apiRoutes.flatMap((r) => (r.memoryMb ? [[functionPathOf(routeId(r)), r.memoryMb]] : [])),
      );
      // The claim long-polls wait at 128 MB, with their concurrency capped.
      const claims = apiRoutes.filter((r) => r.handler.startsWith('dispatch/claim'));
      expect(claims.map((r) => [r.handler, r.memoryMb, r.reservedConcurrency])).toEqual([
        ['dispatch/claim', 128, 10],
        ['dispatch/claim-many', 128, 10],
      ]);
      // The chunk appends (both path forms) at 512 MB: mostly waiting, a little CPU (lib/routes.ts).
      const chunks = apiRoutes.filter((r) => r.handler === 'messages/chunk');
      expect(chunks.map((r) => [r.path, r.memoryMb])).toEqual([
        ['/api/v1/messages/{messageId}/chunks', 512],
        ['/api/v1/chats/{chatId}/messages/{messageId}/chunks', 512],
      ]);
      for (const fn of fns) {
        const reserved = apiRoutes.find((r) => functionPathOf(routeId(r)) === fn.path)?.reservedConcurrency;
        if (fn.path === streamFunctionPath || fn.path === searchWriterPath) continue;
        expect([fn.path, fn.props.ReservedConcurrentExecutions]).toEqual([fn.path, reserved]);
      }
      for (const fn of fns) {
        if (fn.path === streamFunctionPath) {
          expect([fn.props.Runtime, fn.props.Architectures, fn.props.Environment.Variables.NODE_OPTIONS]).toEqual([
            'nodejs22.x',
            ['arm64'],
            undefined,
          ]);
          continue;
        }
        expect([fn.path, fn.props.Runtime, fn.props.Architectures, fn.props.MemorySize, fn.props.Timeout]).toEqual([
          fn.path,
          'nodejs22.x',
          ['arm64'],
          imagePaths.has(fn.path) ? IMAGE_MEMORY_MB : fn.path === effectsPath ? 512 : (memories.get(fn.path) ?? 1024),
          timeouts.get(fn.path) ?? 15,
        ]);
        expect([fn.path, fn.props.Environment.Variables.NODE_OPTIONS]).toEqual([fn.path, undefined]);
      }
    },
  );

  it('each log to their own log group, kept one month', () => {
    const groups = fns.map((fn) => refId(fn.props.LoggingConfig?.LogGroup));
    expect(new Set(groups).size).toBe(fns.length);
    for (const id of groups) {
      const group = main.json.Resources[id ?? ''];
      expect([id, group?.Type, group?.Properties?.RetentionInDays]).toEqual([id, 'AWS::Logs::LogGroup', 30]);
    }
  });

  it('may write logs only to their own log group, without managed policies', () => {
    for (const fn of fns) {
      const role = main.json.Resources[fn.roleId]!;
      expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
      const logStatements = fn.statements.filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      expect(logStatements.flatMap(resourcesOf).map(refId)).toEqual([refId(fn.props.LoggingConfig.LogGroup)]);
    }
  });

  it('get the table name, the service version and the configuration without secrets', () => {
    for (const fn of fns) {
      const env = fn.props.Environment.Variables as Record<string, unknown>;
      expect([fn.path, refId(env.TABLE_NAME)]).toEqual([fn.path, tableId]);
      expect(env.SERVICE_VERSION).toBe(pkg.version);
      // Closed by default: the instance secret, kept in the table, required by reads too.
      expect([fn.path, env.INSTANCE_SECRET_IN_TABLE]).toEqual([fn.path, '1']);
      const config = JSON.parse(env.INSTANCE_CONFIG as string);
      expect(config.appName).toBe('OpenGram');
      expect(config.security).toEqual({ instanceSecretEnabled: true, readEndpointsRequireInstanceSecret: true });
      expect(config.push).not.toHaveProperty('vapidPrivateKey');
    }
  });

  it('are bundled as ESM with source maps, a require shim, and the AWS SDK inside', () => {
    for (const fn of fns) {
      const resource = main.json.Resources[fn.id]!;
      const assetDir = join(main.outdir, String(resource.Metadata?.['aws:asset:path']));
      const code = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
      expect([fn.path, existsSync(join(assetDir, 'index.mjs.map'))]).toEqual([fn.path, true]);
      expect(code.startsWith("import { createRequire as __houseCreateRequire } from 'node:module';")).toBe(true);
      expect(code).toContain('//# sourceMappingURL=index.mjs.map');
    }
    // A route that reads the table carries the DynamoDB client instead of expecting it at run time.
    const chatsList = readFileSync(
      join(
        main.outdir,
        String(main.json.Resources[fnAt('GetApiV1Chats').id]!.Metadata?.['aws:asset:path']),
        'index.mjs',
      ),
      'utf8',
    );
    expect(chatsList).toContain('DynamoDBClient');
    expect(chatsList).not.toMatch(/from\s*["']@aws-sdk\//);
  });
});

describe('table', () => {
  it('has pk/sk string keys, on-demand billing, point-in-time recovery, TTL on `ttl` and a stream', () => {
    main.template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ]),
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
    expect(tableSchema.ttlAttribute).toBe('ttl');
  });

  it('is retained when the stack is deleted or the table replaced', () => {
    const table = main.json.Resources[tableId]!;
    expect([table.DeletionPolicy, table.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
  });

  it('has exactly the indexes of lib/table-schema.ts, each with its projection', () => {
    const indexes: readonly IndexSchema[] = tableSchema.indexes;
    const expected = indexes.map((index) => ({
      IndexName: index.indexName,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: index.include
        ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] }
        : { ProjectionType: 'ALL' },
    }));
    const actual = main.json.Resources[tableId]!.Properties?.GlobalSecondaryIndexes as unknown[];
    expect(actual).toEqual(expected);
  });
});

describe('permissions', () => {
  const tableArn = () => ({ 'Fn::GetAtt': [tableId, 'Arn'] });

  const settingsOnly = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SETTINGS'] } };
  const cursorKeyOnly = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SECRET#CURSOR'] } };
  const secretsDeny = () => ({
    Effect: 'Deny',
    Action: 'dynamodb:*',
    Resource: [tableArn(), { 'Fn::Join': ['', [tableArn(), '/index/*']] }],
    Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['SECRET#*'] } },
  });

  it('every function that reads the table but writes none may count a wrong secret: UpdateItem in RL#* only', () => {
    // The event stream and the read routes check the instance secret too (core/secret-guesses.ts);
    // without the grant the count was denied, and a wrong secret answered 500 instead of 401.
    expect(Keys.signInFailures('*').pk).toBe('RL#*');
    const readers = [
      ...apiRoutes.filter((r) => !r.writes && (r as RouteSpec).table === undefined).map((r) => fnAt(routeId(r))),
    ];
    readers.push(fns.find((f) => f.path.includes('EventStream/Events'))!);
    for (const fn of readers) {
      const counters = allows(fn.statements).filter(
        (st) => JSON.stringify(st.Condition) === JSON.stringify(guessCounterOnly),
      );
      expect([fn.path, counters]).toEqual([fn.path, [guessCounterGrant(tableArn())]]);
    }
  });

  it('read routes cannot update, delete or batch-write (but renew a session record); only the paginating ones may put, into their key only', () => {
    for (const route of apiRoutes.filter((r) => !r.writes && (r as RouteSpec).table === undefined)) {
      const fn = fnAt(routeId(route));
      const actions = dynamoActions(tableAllows(fn.statements));
      const sessionGrants = allows(fn.statements).filter((st) => !tableAllows(fn.statements).includes(st));
      expect([routeKey(route), sessionGrants]).toEqual([
        routeKey(route),
        [guessCounterGrant(tableArn()), ...(authClassOf(route) === 'public' ? [] : [sessionRecordGrant(tableArn())])],
      ]);
      expect([
        routeKey(route),
        actions.filter((a) => /UpdateItem|DeleteItem|BatchWriteItem|TransactWrite|Scan/.test(a)),
      ]).toEqual([routeKey(route), []]);
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
      const puts = allows(fn.statements).filter((s) => actionsOf(s).includes('dynamodb:PutItem'));
      expect([routeKey(route), puts.length]).toEqual([routeKey(route), route.cursors ? 1 : 0]);
      for (const put of puts) {
        expect(put.Condition).toEqual(cursorKeyOnly);
        expect(resourcesOf(put)).toEqual([tableArn()]);
      }
    }
  });

  it('the routes that read only the configuration may only GetItem in SETTINGS (and read the instance secret)', () => {
    const configRoutes = apiRoutes.filter((r) => r.table === 'config');
    expect(configRoutes.map(routeKey).sort()).toEqual([
      'GET /api/v1/config',
      'GET /api/v1/doc',
      'GET /api/v1/reference',
    ]);
    const instanceOnly = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SECRET#INSTANCE'] } };
    for (const route of configRoutes) {
      const table = fnAt(routeId(route)).statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      const settings = { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: tableArn(), Condition: settingsOnly };
      // GET /config checks auth: it reads the instance secret, and only reads it.
      const checksAuth = authClassOf(route) !== 'public';
      const deny = secretsDeny();
      if (checksAuth) {
        Object.assign(deny.Condition, {
          'ForAnyValue:StringNotEquals': { 'dynamodb:LeadingKeys': ['SECRET#INSTANCE', 'SECRET#SESSION'] },
        });
      }
      // It reads the instance secret and the session-signing key (a session cookie is a credential), only reads.
      const readOnly = (keys: string[]) => ({
        Effect: 'Deny',
        Action: [
          'dynamodb:BatchWriteItem',
          'dynamodb:ConditionCheckItem',
          'dynamodb:DeleteItem',
          'dynamodb:PutItem',
          'dynamodb:Query',
          'dynamodb:UpdateItem',
        ],
        Resource: tableArn(),
        Condition: { 'ForAnyValue:StringEquals': { 'dynamodb:LeadingKeys': keys } },
      });
      const secret = [
        {
          Effect: 'Allow',
          Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
          Resource: tableArn(),
          Condition: instanceOnly,
        },
        readOnly(['SECRET#INSTANCE', 'SECRET#SESSION']),
        sessionRecordGrant(tableArn()),
        {
          Effect: 'Allow',
          Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
          Resource: tableArn(),
          Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SECRET#SESSION'] } },
        },
      ];
      expect([routeKey(route), table]).toEqual([routeKey(route), [deny, settings, ...(checksAuth ? secret : [])]]);
    }
  });

  it('write routes can put, update and delete items of the table', () => {
    for (const route of apiRoutes.filter((r) => r.writes)) {
      const fn = fnAt(routeId(route));
      const onTable = fn.statements.filter(
        (s) =>
          s.Condition === undefined && resourcesOf(s).some((r) => JSON.stringify(r) === JSON.stringify(tableArn())),
      );
      const actions = onTable.flatMap(actionsOf);
      expect([routeKey(route), actions]).toEqual([
        routeKey(route),
        expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query']),
      ]);
    }
  });

  it('grants each function exactly the actions it uses, besides its logs', () => {
    const READ = ['ddb:BatchGetItem', 'ddb:ConditionCheckItem', 'ddb:GetItem', 'ddb:Query'];
    const READ_WRITE = [...READ, 'ddb:BatchWriteItem', 'ddb:DeleteItem', 'ddb:PutItem', 'ddb:UpdateItem'];
    const expected: Record<string, string[]> = {
      'StreamTimeouts/ExpireStream': [...READ_WRITE],
      // The flush queue's consumer: flush signals, and the delayed stream checks, which start a
      // loop for a stream still active at its check.
      'Dispatch/Flush': [
        ...READ_WRITE,
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
        'states:StartExecution',
      ],
      'Dispatch/Sweep': [...READ_WRITE, 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:SendMessage'],
      'Tags/Sweep': [...READ_WRITE],
      'Search/Writer': [
        ...READ_WRITE,
        'ddb:DescribeStream',
        'ddb:GetRecords',
        'ddb:GetShardIterator',
        'ddb:ListStreams',
        's3:DeleteObject',
        's3:GetObject',
        's3:PutObject',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ],
      'Effects/Consumer': [
        ...READ_WRITE,
        'ddb:DescribeStream',
        'ddb:GetRecords',
        'ddb:GetShardIterator',
        'ddb:ListStreams',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ],
      'Api/Fallback': ['ddb:GetItem'],
      // No storage call at all (lib/routes.ts table: 'none'): it answers while DynamoDB does not.
      'Api/GetApiV1Health': [],
      // Beside its SETTINGS read, the instance secret (BatchGetItem: store/secrets-repo.ts storedSecret).
      'Api/GetApiV1Config': ['ddb:BatchGetItem', 'ddb:GetItem'],
      'Api/PatchApiV1ConfigAdmin': [...READ_WRITE],
      'Api/PostApiV1ConfigAdminValidateAutoRename': [...READ_WRITE],
      'Api/PostApiV1Chats': [...READ_WRITE, 'sqs:SendMessage'],
      'Api/GetApiV1Chats': [...READ, 'ddb:PutItem'],
      'Api/GetApiV1ChatsPendingSummary': [...READ],
      'Api/GetApiV1ChatsUnreadSummary': [...READ],
      'Api/GetApiV1ChatsChatid': [...READ],
      'Api/PatchApiV1ChatsChatid': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidArchive': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidUnarchive': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidMarkRead': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidMarkUnread': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidTyping': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidUserTyping': [...READ_WRITE],
      // Dispatch inputs and the delayed stream check, both on the flush queue (no Step Functions:
      // the check starts loops).
      'Api/PostApiV1ChatsChatidMessages': [...READ_WRITE, 'sqs:SendMessage'],
      'Api/GetApiV1ChatsChatidMessages': [...READ, 'ddb:PutItem'],
      'Api/PostApiV1ChatsChatidMessagesCancelStreaming': [...READ_WRITE],
      'Api/PostApiV1MessagesMessageidChunks': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidMessagesMessageidChunks': [...READ_WRITE],
      'Api/PostApiV1MessagesMessageidComplete': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidMessagesMessageidComplete': [...READ_WRITE],
      'Api/PostApiV1MessagesMessageidCancel': [...READ_WRITE],
      'Api/PostApiV1ChatsChatidMessagesMessageidCancel': [...READ_WRITE],
      // Deadline timers (§5.5.6): delayed records on the flush queue.
      'Api/PostApiV1ChatsChatidRequests': [...READ_WRITE, 'sqs:SendMessage'],
      'Api/GetApiV1ChatsChatidRequests': [...READ],
      // The approvals list pages with signed cursors; the decision log is read only.
      'Api/GetApiV1Requests': [...READ, 'ddb:PutItem'],
      'Api/GetApiV1Decisions': [...READ],
      'Api/PatchApiV1RequestsRequestid': [...READ_WRITE, 'sqs:SendMessage'],
      'Api/PostApiV1RequestsRequestidResolve': [...READ_WRITE, 'sqs:SendMessage'],
      'Api/PostApiV1RequestsRequestidCancel': [...READ_WRITE],
      'Api/PostApiV1DispatchClaim': [
        ...READ_WRITE,
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ],
      'Api/PostApiV1DispatchClaimMany': [
        ...READ_WRITE,
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ],
      'Api/PostApiV1DispatchBatchidHeartbeat': [
        ...READ_WRITE,
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ],
      'Api/PostApiV1DispatchBatchidComplete': [
        ...READ_WRITE,
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ],
      'Api/PostApiV1DispatchBatchidFail': [
        ...READ_WRITE,
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ],
      'Api/PostApiV1ChatsChatidMedia': [...READ_WRITE, 's3:DeleteObject', 's3:PutObject'],
      'Api/GetApiV1ChatsChatidMedia': [...READ, 'ddb:PutItem'],
      'Api/PostApiV1ChatsChatidMediaUploads': [...READ_WRITE, 's3:PutObject'],
      'Api/PostApiV1ChatsChatidMediaUploadsUploadidComplete': [
        ...READ_WRITE,
        's3:DeleteObject',
        's3:GetObject',
        's3:ListBucket',
        's3:PutObject',
      ],
      'Api/GetApiV1MediaMediaid': [...READ],
      'Api/DeleteApiV1MediaMediaid': [...READ_WRITE, 's3:DeleteObject'],
      'Api/GetApiV1FilesMediaid': [...READ, 's3:GetObject', 's3:ListBucket'],
      'Api/GetApiV1FilesMediaidThumbnail': [...READ, 's3:GetObject', 's3:ListBucket'],
      'Api/GetApiV1TagsSuggestions': [...READ],
      'Api/GetApiV1Search': [...READ, 'ddb:PutItem', 's3:GetObject'],
      'Api/PostApiV1PushSubscribe': [...READ_WRITE],
      'Api/DeleteApiV1PushSubscribe': [...READ_WRITE],
      'Api/PostApiV1PushTest': [...READ_WRITE],
      'Api/PostApiV1AuthSession': [...READ_WRITE],
      'Api/DeleteApiV1AuthSession': [...READ_WRITE],
      'Api/DeleteApiV1AuthSessions': [...READ_WRITE],
      'Api/GetApiV1Doc': ['ddb:GetItem'],
      'Api/GetApiV1Reference': ['ddb:GetItem'],
      // Reads, and voids holes in the event log (one item shape, checked in "event stream").
      'EventStream/Events': [...READ, 'ddb:PutItem'],
    };
    const everyone = ['logs:CreateLogStream', 'logs:PutLogEvents'];
    // Besides, the functions that check auth read and renew session records (checked in "session records").
    const actual = Object.fromEntries(
      fns.map((fn) => {
        const actions = [...new Set(tableAllows(fn.statements).flatMap(actionsOf))];
        expect([fn.path, everyone.filter((a) => !actions.includes(a))]).toEqual([fn.path, []]);
        const own = actions.filter((a) => !everyone.includes(a)).map((a) => a.replace(/^dynamodb:/, 'ddb:'));
        // By path without the area's nested stack (Api/Chats/GetApiV1Chats → Api/GetApiV1Chats): the grants
        // are the ones the functions had before the areas were nested.
        const path = fn.path.replace(/^ChatRelay\//, '').replace(/\/Resource$/, '');
        return [path.replace(new RegExp(`^Api/(${API_AREAS.map(areaStackId).join('|')})/`), 'Api/'), own.sort()];
      }),
    );
    expect(actual).toEqual(
      Object.fromEntries(Object.entries(expected).map(([path, actions]) => [path, [...actions].sort()])),
    );
  });

  it('the fallback may only read the configuration (the CORS allow-list in force, §1.13)', () => {
    const fallback = fnAt('Fallback').statements.filter((s) => s.Effect === 'Allow');
    expect(dynamoActions(fallback)).toEqual(['dynamodb:GetItem']);
    expect(fallback.filter((s) => actionsOf(s).includes('dynamodb:GetItem')).map((s) => s.Condition)).toEqual([
      { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [Keys.setting('').pk] } },
    ]);
  });

  describe('generated secrets (the SECRET# partitions: the cursor-signing key)', () => {
    const table = () => `\${${tableId}.Arn}`;
    const like = (value: string, pattern: string) =>
      new RegExp(
        `^${pattern
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ).test(value);
    const statementAttributeKeys = ['dynamodb:Attributes', 'dynamodb:ReturnValues'];
    /** Whether a statement's conditions hold for a request naming `leadingKeys` (the operators the stack uses). */
    const holds = (condition: PolicyStatementJson['Condition'], leadingKeys: string[]) =>
      Object.entries(condition ?? {}).every(([operator, keys]) =>
        Object.entries(keys).every(([key, values]) => {
          if (key !== 'dynamodb:LeadingKeys') {
            // What a request writes or returns (the SSE function's void put): some request meets it.
            expect(statementAttributeKeys).toContain(key);
            return true;
          }
          expect(key).toBe('dynamodb:LeadingKeys');
          const listed = [values].flat() as string[];
          if (operator === 'ForAllValues:StringEquals') return leadingKeys.every((k) => listed.includes(k));
          if (operator === 'ForAllValues:StringLike') return leadingKeys.every((k) => listed.some((p) => like(k, p)));
          if (operator === 'ForAnyValue:StringLike') return leadingKeys.some((k) => listed.some((p) => like(k, p)));
          if (operator === 'ForAnyValue:StringEquals') return leadingKeys.some((k) => listed.includes(k));
          if (operator === 'ForAnyValue:StringNotEquals') return leadingKeys.some((k) => !listed.includes(k));
          throw new Error(`Operator ${operator} is not modelled here`);
        }),
      );
    /** IAM's answer for one request on the table: an applicable Deny wins, else an applicable Allow. */
    const allowed = (statements: PolicyStatementJson[], action: string, leadingKeys: string[]) => {
      const applies = (s: PolicyStatementJson) =>
        actionsOf(s).some((a) => a === action || (a.endsWith('*') && action.startsWith(a.slice(0, -1)))) &&
        resourcesOf(s).map(joinedString).includes(table()) &&
        holds(s.Condition, leadingKeys);
      if (statements.some((s) => s.Effect === 'Deny' && applies(s))) return false;
      return statements.some((s) => s.Effect === 'Allow' && applies(s));
    };
    const secret = Keys.generatedSecret('CURSOR').pk;
    const cursorPaths = () => apiRoutes.filter((r) => (r as RouteSpec).cursors).map((r) => functionPathOf(routeId(r)));

    it('the cursor-signing key lives in a SECRET# partition of its own, outside SETTINGS', () => {
      expect(secret).toBe('SECRET#CURSOR');
      expect(like(secret, Keys.generatedSecretsPattern)).toBe(true);
      expect(like(Keys.setting('admin-config').pk, Keys.generatedSecretsPattern)).toBe(false);
    });

    it('only the paginating routes can read or create it; no function can update or delete it', () => {
      expect(cursorPaths().sort()).toEqual(
        [
          functionPathOf('GetApiV1Chats'),
          functionPathOf('GetApiV1ChatsChatidMedia'),
          functionPathOf('GetApiV1ChatsChatidMessages'),
          functionPathOf('GetApiV1Search'),
          functionPathOf('GetApiV1Requests'),
        ].sort(),
      );
      const reach = Object.fromEntries(
        fns.map((fn) => {
          const can = (action: string, keys = [secret]) => allowed(fn.statements, `dynamodb:${action}`, keys);
          return [
            fn.path,
            {
              get: can('GetItem'),
              query: can('Query'),
              batchGet: can('BatchGetItem', ['CHAT#c', secret]),
              put: can('PutItem'),
              update: can('UpdateItem'),
              delete: can('DeleteItem'),
              batchWrite: can('BatchWriteItem', ['CHAT#c', secret]),
              check: can('ConditionCheckItem'),
            },
          ];
        }),
      );
      const none = { get: false, query: false, batchGet: false, put: false, update: false, delete: false };
      const expected = Object.fromEntries(
        fns.map((fn) => [
          fn.path,
          cursorPaths().includes(fn.path)
            ? { ...none, get: true, query: true, put: true, batchWrite: false, check: true }
            : { ...none, batchWrite: false, check: false },
        ]),
      );
      expect(reach).toEqual(expected);
    });

    it('each function reaches exactly the stored secrets it uses, read-only; only their maker writes them', () => {
      const stored = ['INSTANCE', 'ORIGIN_VERIFY', 'VAPID'] as const;
      const actions = [
        'GetItem',
        'BatchGetItem',
        'Query',
        'ConditionCheckItem',
        'PutItem',
        'UpdateItem',
        'DeleteItem',
        'BatchWriteItem',
      ];
      const maker = allFunctionsOf(main.json).find((fn) => fn.path === makerPath)!;
      const reach = Object.fromEntries(
        [...fns, maker].map((fn) => {
          const pks = Object.fromEntries(
            stored.map((name) => {
              const pk = Keys.generatedSecret(name).pk;
              const can = actions.filter((a) => allowed(fn.statements, `dynamodb:${a}`, [pk]));
              return [name, can];
            }),
          );
          return [fn.path, Object.fromEntries(Object.entries(pks).filter(([, can]) => can.length > 0))];
        }),
      );
      const read = ['GetItem', 'BatchGetItem'];
      const checksAuth = (path: string) =>
        path === streamFunctionPath ||
        apiRoutes.some(
          (r) =>
            functionPathOf(routeId(r)) === path && (authClassOf(r) !== 'public' || !!(r as RouteSpec).signsSessions),
        );
      const behindEdge = (path: string) =>
        path === streamFunctionPath || apiRoutes.some((r) => functionPathOf(routeId(r)) === path && r.writes);
      const expected = Object.fromEntries(
        [...fns, maker].map((fn) => {
          const own: Record<string, string[]> = {};
          if (checksAuth(fn.path)) own.INSTANCE = read;
          if (behindEdge(fn.path)) own.ORIGIN_VERIFY = read;
          if (fn.path === makerPath)
            Object.assign(own, { INSTANCE: ['GetItem', 'PutItem'], ORIGIN_VERIFY: ['GetItem', 'PutItem'] });
          return [fn.path, own];
        }),
      );
      expect(reach).toEqual(expected);
      // The functions that read one know it (STORED_SECRETS), and the others do not.
      for (const fn of fns) {
        const names = Object.keys(expected[fn.path]!);
        const env = (fn.props.Environment?.Variables ?? {}) as Record<string, unknown>;
        expect([fn.path, env.STORED_SECRETS]).toEqual([fn.path, names.length > 0 ? names.join(',') : undefined]);
      }
      // A batch mixing an allowed secret with another partition is denied (never needed: secrets are read apart).
      const chats = fnAt('GetApiV1Chats');
      expect(allowed(chats.statements, 'dynamodb:BatchGetItem', ['SECRET#INSTANCE'])).toBe(true);
      expect(allowed(chats.statements, 'dynamodb:BatchGetItem', ['SECRET#INSTANCE', 'SECRET#VAPID'])).toBe(false);
    });

    it('the session-signing key: every function that checks auth may only read it; the sign-in may also put it', () => {
      const pk = Keys.generatedSecret('SESSION').pk;
      const actions = ['GetItem', 'BatchGetItem', 'Query', 'ConditionCheckItem', 'PutItem', 'UpdateItem', 'DeleteItem'];
      const signers = (routes as readonly RouteSpec[])
        .filter((r) => r.signsSessions)
        .map((r) => functionPathOf(routeId(r)))
        .sort();
      expect(signers).toEqual([functionPathOf('PostApiV1AuthSession')]);
      const checks = (path: string) =>
        path === streamFunctionPath ||
        (routes as readonly RouteSpec[]).some(
          (r) => functionPathOf(routeId(r)) === path && authClassOf(r) !== 'public',
        );
      const reach = Object.fromEntries(
        fns.map((fn) => [fn.path, actions.filter((a) => allowed(fn.statements, `dynamodb:${a}`, [pk]))]),
      );
      const expected = Object.fromEntries(
        fns.map((fn) => [
          fn.path,
          signers.includes(fn.path)
            ? ['GetItem', 'BatchGetItem', 'PutItem']
            : checks(fn.path)
              ? ['GetItem', 'BatchGetItem']
              : [],
        ]),
      );
      expect(reach).toEqual(expected);
    });

    it('session records: every function that checks auth may read and renew them, the sign-outs delete them', () => {
      const pk = Keys.session('id').pk;
      const checks = (path: string) =>
        path === streamFunctionPath ||
        (routes as readonly RouteSpec[]).some(
          (r) => functionPathOf(routeId(r)) === path && (authClassOf(r) !== 'public' || !!r.signsSessions),
        );
      for (const fn of fns.filter((f) => checks(f.path))) {
        const can = (action: string) => allowed(fn.statements, `dynamodb:${action}`, [pk]);
        expect([fn.path, can('GetItem'), can('UpdateItem')]).toEqual([fn.path, true, true]);
      }
      for (const id of ['PostApiV1AuthSession', 'DeleteApiV1AuthSession', 'DeleteApiV1AuthSessions']) {
        const fn = fnAt(id);
        const can = (action: string) => allowed(fn.statements, `dynamodb:${action}`, [pk]);
        expect([id, can('PutItem'), can('DeleteItem'), can('Query'), can('BatchWriteItem')]).toEqual([
          id,
          true,
          true,
          true,
          true,
        ]);
      }
    });

    it('the deny leaves every other partition as granted', () => {
      for (const fn of fns) {
        const can = (action: string, pk: string) => allowed(fn.statements, `dynamodb:${action}`, [pk]);
        const access = dynamoActions(tableAllows(fn.statements));
        const expected = {
          settings: access.length > 0,
          chat: access.includes('dynamodb:Query'),
          write: access.includes('dynamodb:UpdateItem'),
        };
        const actual = {
          settings: can('GetItem', 'SETTINGS'),
          chat: can('GetItem', 'CHAT#c') && can('Query', 'CHAT#c'),
          write: can('UpdateItem', 'CHAT#c') && can('PutItem', 'CHAT#c'),
        };
        expect([fn.path, actual]).toEqual([fn.path, expected]);
      }
    });

    it('every function with table access carries the Deny on SECRET#, excepting only the secrets it reads', () => {
      for (const fn of fns) {
        const denies = fn.statements.filter((s) => s.Effect === 'Deny' && actionsOf(s).includes('dynamodb:*'));
        const hasTable = dynamoActions(allows(fn.statements)).length > 0;
        // Every function that checks auth also reads the session-signing key (STORED_SECRETS lists INSTANCE).
        const stored = String((fn.props.Environment?.Variables as Record<string, unknown>)?.STORED_SECRETS ?? '');
        const allowedSecrets = [
          ...(cursorPaths().includes(fn.path) ? ['SECRET#CURSOR'] : []),
          ...(stored.split(',').includes('INSTANCE') ? ['SECRET#SESSION'] : []),
          ...String((fn.props.Environment?.Variables as Record<string, unknown>)?.STORED_SECRETS ?? '')
            .split(',')
            .filter(Boolean)
            .map((name) => `SECRET#${name}`),
        ].sort();
        const deny = secretsDeny();
        if (allowedSecrets.length > 0) {
          Object.assign(deny.Condition, {
            'ForAnyValue:StringNotEquals': { 'dynamodb:LeadingKeys': allowedSecrets },
          });
        }
        expect([fn.path, denies]).toEqual([fn.path, hasTable ? [deny] : []]);
      }
    });
  });
});

describe('stream timeouts', () => {
  interface AslState {
    Type: string;
    Next?: string;
    Default?: string;
    Resource?: string;
    Choices?: { Variable?: string; BooleanEquals?: unknown; Next: string }[];
    Retry?: { ErrorEquals: string[]; IntervalSeconds?: number; MaxAttempts?: number; BackoffRate?: number }[];
    [key: string]: unknown;
  }
  interface AslDefinition {
    StartAt: string;
    States: Record<string, AslState>;
    TimeoutSeconds?: number;
  }

  const stateMachine = () => main.json.Resources[stateMachineId]!;
  const definition = () => JSON.parse(joinedString(stateMachine().Properties?.DefinitionString)) as AslDefinition;
  const expiry = () => fns.find((f) => f.path === expiryFunctionPath)!;
  /** The states in loop order: Wait → Task → Choice. */
  const loop = () => {
    const def = definition();
    const wait = def.States[def.StartAt]!;
    const task = def.States[wait.Next ?? '']!;
    const choice = def.States[task.Next ?? '']!;
    return { def, wait, task, choice };
  };

  it('is one Standard state machine with a one-day timeout', () => {
    expect(resourcesOfType(main.json, 'AWS::StepFunctions::StateMachine')).toHaveLength(1);
    expect(stateMachine().Properties?.StateMachineType).toBe('STANDARD');
    expect(definition().TimeoutSeconds).toBe(86_400);
  });

  it('waits $.waitSeconds, runs the expiry function, and stops when $.done or waits again', () => {
    const { def, wait, task, choice } = loop();
    expect(Object.keys(def.States)).toHaveLength(4);
    expect(wait).toEqual({ Type: 'Wait', SecondsPath: '$.waitSeconds', Next: expect.any(String) });
    expect(task.Type).toBe('Task');
    // payloadResponseOnly: the function ARN itself is the resource, and with no input or
    // result processing the state output is exactly the function's return value
    // ({ messageId, done, waitSeconds, waitMs }), which the next Wait reads.
    expect(task.Resource).toBe(`\${${expiry().id}.Arn}`);
    for (const key of ['Parameters', 'InputPath', 'ResultSelector', 'ResultPath', 'OutputPath', 'Catch', 'End']) {
      expect([key, task[key]]).toEqual([key, undefined]);
    }
    expect(choice.Type).toBe('Choice');
    expect(choice.Choices).toEqual([{ Variable: '$.done', BooleanEquals: true, Next: expect.any(String) }]);
    expect(def.States[choice.Choices![0]!.Next]).toEqual({ Type: 'Succeed' });
    expect(choice.Default).toBe(def.StartAt);
  });

  it('retries transient Lambda errors and failed checks a few times with backoff', () => {
    const retry = loop().task.Retry ?? [];
    expect(retry.flatMap((r) => r.ErrorEquals)).toEqual(
      expect.arrayContaining([
        'Lambda.ServiceException',
        'Lambda.TooManyRequestsException',
        'Lambda.SdkClientException',
        'States.TaskFailed',
      ]),
    );
    for (const r of retry) {
      expect([r.ErrorEquals, r.MaxAttempts! >= 2 && r.MaxAttempts! <= 10, r.BackoffRate! > 1]).toEqual([
        r.ErrorEquals,
        true,
        true,
      ]);
    }
    // Retriers apply in order and States.TaskFailed also matches Lambda.* errors: it comes last.
    expect(retry.at(-1)!.ErrorEquals).toEqual(['States.TaskFailed']);
  });

  it('logs errors to its own log group kept one month, and traces with X-Ray', () => {
    const props = stateMachine().Properties ?? {};
    expect(props.TracingConfiguration).toEqual({ Enabled: true });
    expect(props.LoggingConfiguration.Level).toBe('ERROR');
    const destinations = props.LoggingConfiguration.Destinations as {
      CloudWatchLogsLogGroup: { LogGroupArn: unknown };
    }[];
    expect(destinations).toHaveLength(1);
    const groupId = refId(destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn)!;
    const group = main.json.Resources[groupId];
    expect([group?.Type, group?.Properties?.RetentionInDays]).toEqual(['AWS::Logs::LogGroup', 30]);
    expect(cdkPath(group!)).toMatch(/^ChatRelay\/StreamTimeouts\//);
  });

  it('may invoke the expiry function (and its versions) and no other function', () => {
    const statements = statementsOfRole(main.json, refId(stateMachine().Properties?.RoleArn)!);
    const actions = statements.flatMap(actionsOf);
    expect(actions.filter((a) => !/^(logs|xray):/.test(a))).toEqual(['lambda:InvokeFunction']);
    const invokes = statements.filter((s) => actionsOf(s).includes('lambda:InvokeFunction'));
    expect(invokes.flatMap(resourcesOf).map(joinedString).sort()).toEqual([
      `\${${expiry().id}.Arn}`,
      `\${${expiry().id}.Arn}:*`,
    ]);
  });

  it('runs the expiry function on arm64 Node.js 22 with the table (read-write) and the configuration', () => {
    const fn = expiry();
    expect([fn.props.Runtime, fn.props.Architectures]).toEqual(['nodejs22.x', ['arm64']]);
    const env = fn.props.Environment.Variables as Record<string, unknown>;
    expect(refId(env.TABLE_NAME)).toBe(tableId);
    expect(JSON.parse(env.INSTANCE_CONFIG as string).server.streamTimeoutSeconds).toBe(60);
    expect(dynamoActions(fn.statements)).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
    );
  });

  const flushFn = () => fns.find((f) => f.path === flushFunctionPath)!;
  const queueAt = (path: string): [string, Record<string, any>] => {
    const found = resourcesOfType(main.json, 'AWS::SQS::Queue').find(
      ([, q]) => cdkPath(q) === `ChatRelay/${path}/Resource`,
    );
    if (!found) throw new Error(`no queue ${path}`);
    return [found[0], found[1].Properties ?? {}];
  };
  const flushQueue = () => queueAt('Dispatch/FlushSignals');
  const flushDlq = () => queueAt('Dispatch/FlushDeadLetters');
  const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
  const isQueueArn = (arn: unknown) => main.json.Resources[refId(arn) ?? '']?.Type === 'AWS::SQS::Queue';

  it(
    'carries the stream checks on the flush queue, which fits a check: no queue of its own; the flush consumer ' +
      'has at least the check timeout, visibility 6x that, retention past the 900 s delay, and the receive ' +
      'limit the local stand-in follows',
    () => {
      const own = resourcesOfType(main.json, 'AWS::SQS::Queue').filter(([, q]) =>
        cdkPath(q).startsWith('ChatRelay/StreamTimeouts/'),
      );
      expect(own).toEqual([]);
      const [, props] = flushQueue();
      expect(flushFn().props.Timeout).toBeGreaterThanOrEqual(CHECK_TIMEOUT.toSeconds());
      expect(props.VisibilityTimeout).toBeGreaterThanOrEqual(6 * flushFn().props.Timeout);
      // A check is delayed 900 s at most, then retried a few times.
      expect(props.MessageRetentionPeriod).toBeGreaterThanOrEqual(86_400);
      // One number where the checks and the flush signals meet: the queue's, and the local stand-in's.
      expect(props.RedrivePolicy).toEqual({ deadLetterTargetArn: arnOf(flushDlq()[0]), maxReceiveCount: 5 });
      expect([CHECK_MAX_RECEIVES, FLUSH_MAX_RECEIVES]).toEqual([5, 5]);
      // No alarm of its own: the flush dead-letter alarm covers the checks.
      const alarms = resourcesOfType(main.json, 'AWS::CloudWatch::Alarm').filter(([, a]) =>
        cdkPath(a).startsWith('ChatRelay/StreamTimeouts/'),
      );
      expect(alarms).toEqual([]);
    },
  );

  it('has exactly one SQS event source mapping in the template: the flush queue feeding the flush consumer', () => {
    const mappings = resourcesOfType(main.json, 'AWS::Lambda::EventSourceMapping')
      .map(([, m]) => m.Properties ?? {})
      .filter((m) => isQueueArn(m.EventSourceArn));
    expect(mappings).toEqual([
      {
        EventSourceArn: arnOf(flushQueue()[0]),
        FunctionName: { Ref: flushFn().id },
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 0,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      },
    ]);
  });

  it('runs the checks in the flush consumer (functions/jobs/flush.ts), which has the SM ARN', () => {
    const fn = flushFn();
    const env = fn.props.Environment.Variables as Record<string, unknown>;
    expect(env.STREAM_TIMEOUT_STATE_MACHINE_ARN).toEqual({ Ref: stateMachineId });
    expect(JSON.parse(env.INSTANCE_CONFIG as string).server.streamTimeoutSeconds).toBe(60);
    expect(String(fn.props.Description)).toMatch(/stream checks/);
    const assetDir = join(main.outdir, String(main.json.Resources[fn.id]!.Metadata?.['aws:asset:path']));
    const bundle = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
    expect([bundle.includes('stream check'), bundle.includes('batchItemFailures')]).toEqual([true, true]);
  });

  it(
    'gives the streamTimer routes the flush queue URL and sqs:SendMessage on it (nothing else), and ' +
      'states:StartExecution on the state machine to the flush consumer only',
    () => {
      const timerRoutes = apiRoutes.filter((r) => r.streamTimer);
      expect(timerRoutes.map(routeKey)).toContain('POST /api/v1/chats/{chatId}/messages');
      const timerPaths = new Set(timerRoutes.map((r) => functionPathOf(routeId(r))));
      const [flushId, dlqId] = [flushQueue()[0], flushDlq()[0]];
      const onStates = (statements: PolicyStatementJson[]) =>
        statements.filter((s) => actionsOf(s).some((a) => a.startsWith('states:')));
      const onFlushQueues = (statements: PolicyStatementJson[]) =>
        statements.filter((s) => resourcesOf(s).some((r) => [flushId, dlqId].includes(refId(r)!)));
      for (const fn of fns) {
        const env = fn.props.Environment.Variables as Record<string, unknown>;
        const starts = onStates(fn.statements);
        const onQueue = onFlushQueues(fn.statements);
        // The stream checks' own variable is gone: they go where the flush signals go.
        expect([fn.path, env.STREAM_CHECK_QUEUE_URL]).toEqual([fn.path, undefined]);
        if (timerPaths.has(fn.path)) {
          expect([fn.path, env.FLUSH_QUEUE_URL, env.STREAM_TIMEOUT_STATE_MACHINE_ARN]).toEqual([
            fn.path,
            { Ref: flushId },
            undefined,
          ]);
          // (A statement may also name another queue: minimized policies join grants of one action.)
          const flushQueues = onQueue.flatMap(resourcesOf).filter((r) => [flushId, dlqId].includes(refId(r)!));
          expect([fn.path, [...new Set(onQueue.flatMap(actionsOf))], flushQueues]).toEqual([
            fn.path,
            ['sqs:SendMessage'],
            onQueue.map(() => arnOf(flushId)),
          ]);
          expect([fn.path, starts]).toEqual([fn.path, []]);
        } else if (fn.path === flushFunctionPath) {
          expect(starts.flatMap(actionsOf)).toEqual(['states:StartExecution']);
          expect(starts.flatMap(resourcesOf)).toEqual([{ Ref: stateMachineId }]);
        } else {
          expect([fn.path, env.STREAM_TIMEOUT_STATE_MACHINE_ARN, starts]).toEqual([fn.path, undefined, []]);
        }
      }
      // No other role of the stack may touch Step Functions either.
      const flushRole = flushFn().roleId;
      for (const [id, policy] of resourcesOfType(main.json, 'AWS::IAM::Policy')) {
        const roles = (policy.Properties?.Roles as unknown[]).map(refId);
        const statements = policy.Properties?.PolicyDocument.Statement as PolicyStatementJson[];
        if (onStates(statements).length > 0) expect([id, roles]).toEqual([id, [flushRole]]);
      }
    },
  );
});

describe('event stream', () => {
  const stream = () => fns.find((f) => f.path === streamFunctionPath)!;
  const urls = () => resourcesOfType(main.json, 'AWS::Lambda::Url');
  /** The Lambda permissions of the stream function (FunctionName is its ARN). */
  const permissionsOf = (fnId: string) =>
    resourcesOfType(main.json, 'AWS::Lambda::Permission')
      .map(([, p]) => p.Properties ?? {})
      .filter((p) => refId(p.FunctionName) === fnId);

  it('is one function URL in response-streaming mode, auth type NONE, without URL CORS, on the stream function', () => {
    expect(urls()).toHaveLength(1);
    const url = urls()[0]![1].Properties ?? {};
    expect(url.InvokeMode).toBe('RESPONSE_STREAM');
    expect(url.AuthType).toBe('NONE');
    // The handler answers preflight and sets CORS from the live configuration (event-stream.ts).
    expect(url.Cors).toBeUndefined();
    expect(url.Qualifier).toBeUndefined();
    expect(url.TargetFunctionArn).toEqual({ 'Fn::GetAtt': [stream().id, 'Arn'] });
  });

  it("is the route table's one streaming entry, with no API Gateway route and no function of the HTTP API", () => {
    expect(routes.filter((r) => (r as RouteSpec).streaming)).toEqual([streamRoute]);
    expect(apiRoutes).toHaveLength(routes.length - 1);
    expect(apiRoutes).not.toContain(streamRoute);
    const keys = resourcesOfType(main.json, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties?.RouteKey);
    expect(keys).not.toContain(routeKey(streamRoute));
    expect(keys.filter((key) => String(key).includes('/events/'))).toEqual([]);
    expect(fns.filter((f) => f.path.includes(`/${routeId(streamRoute)}/`))).toEqual([]);
    expect(stream().props.Description).toBe(`${routeKey(streamRoute)} (SSE over a response-streaming function URL)`);
  });

  it(
    'runs the streaming handler of streamRoute on arm64 Node.js 22, for 15 minutes (beyond the stream lifetime) ' +
      "with 128 MB and at most 25 streams at once, all from the route's entry",
    () => {
      const fn = stream();
      expect(streamRoute.handler).toBe('events/stream');
      expect([fn.props.Runtime, fn.props.Architectures, fn.props.Handler]).toEqual([
        'nodejs22.x',
        ['arm64'],
        'index.handler',
      ]);
      expect([fn.props.Timeout, fn.props.MemorySize, fn.props.ReservedConcurrentExecutions]).toEqual([900, 128, 25]);
      expect([streamRoute.timeoutSeconds, streamRoute.memoryMb, streamRoute.reservedConcurrency]).toEqual([
        900, 128, 25,
      ]);
      // The stream ends on its own, with a minute to spare, before Lambda would cut it off.
      expect(fn.props.Timeout * 1000 - DEFAULT_TIMING.lifetimeMs).toBeGreaterThanOrEqual(60_000);
      const assetDir = join(main.outdir, String(main.json.Resources[fn.id]!.Metadata?.['aws:asset:path']));
      expect(readFileSync(join(assetDir, 'index.mjs'), 'utf8')).toContain('streamifyResponse');
    },
  );

  it('gets the table name, the service version and the configuration, and no state machine', () => {
    const env = stream().props.Environment.Variables as Record<string, unknown>;
    expect(refId(env.TABLE_NAME)).toBe(tableId);
    expect(env.SERVICE_VERSION).toBe(pkg.version);
    expect(JSON.parse(env.INSTANCE_CONFIG as string).server.corsOrigins).toEqual([]);
    expect(env.STREAM_TIMEOUT_STATE_MACHINE_ARN).toBeUndefined();
  });

  it("reads the table as a read route does ('read' access), and may put only a void of a hole in the event log", () => {
    // One row per action (how CDK groups actions into statements varies with its settings).
    const grantsOf = (statements: PolicyStatementJson[]) =>
      statements
        .flatMap((s) =>
          actionsOf(s).map((action) => ({
            action,
            resources: resourcesOf(s).map(joinedString).sort(),
            condition: s.Condition,
          })),
        )
        .filter((g) => g.action.startsWith('dynamodb:'))
        .sort((a, b) => a.action.localeCompare(b.action));
    const table = `\${${tableId}.Arn}`;
    const read = (action: string) => ({
      action: `dynamodb:${action}`,
      resources: [table, `${table}/index/*`],
      condition: undefined,
    });
    // Besides, reading its stored secrets (the instance secret and the origin-verify value), checked in
    // "each function reaches exactly the stored secrets it uses".
    const secretsOnly = (g: { condition: unknown }) =>
      !JSON.stringify(g.condition ?? {}).includes('SECRET#') &&
      JSON.stringify(g.condition) !== JSON.stringify(sessionsOnly) &&
      JSON.stringify(g.condition) !== JSON.stringify(guessCounterOnly);
    const grants = grantsOf(allows(stream().statements)).filter(secretsOnly);
    const voidsOnly = {
      action: 'dynamodb:PutItem',
      resources: [table],
      condition: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVT#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'type', 'seq', 'void', 'ttl'] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      },
    };
    expect(grants).toEqual([
      read('BatchGetItem'),
      read('ConditionCheckItem'),
      read('GetItem'),
      voidsOnly,
      read('Query'),
    ]);
    // Besides that put, the same grant as a read route's that signs no cursor.
    expect(grants.filter((g) => g !== grants[3])).toEqual(
      grantsOf(allows(fnAt('GetApiV1ChatsChatid').statements)).filter(secretsOnly),
    );
    // The events' partitions and a void's attributes, as the store spells them.
    expect([Keys.eventsPattern, Keys.event(1).pk.startsWith('EVT#'), [...Keys.voidAttributes]]).toEqual([
      'EVT#*',
      true,
      ['pk', 'sk', 'type', 'seq', 'void', 'ttl'],
    ]);
  });

  it(
    'is public through its function URL only (InvokeFunctionUrl with auth type NONE; InvokeFunction only via the ' +
      'URL)',
    () => {
      const permissions = permissionsOf(stream().id);
      expect(permissions.map(({ FunctionName: _fn, ...rest }) => rest)).toEqual(
        expect.arrayContaining([
          { Action: 'lambda:InvokeFunctionUrl', Principal: '*', FunctionUrlAuthType: 'NONE' },
          { Action: 'lambda:InvokeFunction', Principal: '*', InvokedViaFunctionUrl: true },
        ]),
      );
      expect(permissions).toHaveLength(2);
      // No other function of the stack is open to everyone.
      for (const fn of fns.filter((f) => f.path !== streamFunctionPath)) {
        expect([fn.path, permissionsOf(fn.id).filter((p) => p.Principal === '*')]).toEqual([fn.path, []]);
      }
    },
  );

  it("is in the API document the synth writes beside the doc function's bundle, with every route", () => {
    const doc = fnAt(routeId(routes.find((r) => r.handler === 'doc/get')!));
    const assetDir = join(main.outdir, String(main.json.Resources[doc.id]!.Metadata?.['aws:asset:path']));
    const document = JSON.parse(readFileSync(join(assetDir, 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(routes.map(routeKey).sort());
    expect(Object.keys(document.paths[streamRoute.path]!.get as object)).toContain('responses');
  });

  it('outputs the function URL as EventsUrl, saying where the stream lives under it', () => {
    const output = main.json.Outputs?.EventsUrl;
    expect(output?.Value).toEqual({ 'Fn::GetAtt': [urls()[0]![0], 'FunctionUrl'] });
    expect(output?.Description).toContain(`<EventsUrl>${streamRoute.path.slice(1)}`);
  });
});

describe('dispatch queues', () => {
  const queueAt = (name: string): [string, Record<string, any>] => {
    const found = resourcesOfType(main.json, 'AWS::SQS::Queue').find(
      ([, q]) => cdkPath(q) === `ChatRelay/Dispatch/${name}/Resource`,
    );
    if (!found) throw new Error(`no queue ${name}`);
    return [found[0], found[1].Properties ?? {}];
  };
  const batches = () => queueAt('Batches');
  const batchDlq = () => queueAt('BatchDeadLetters');
  const flushes = () => queueAt('FlushSignals');
  const flushDlq = () => queueAt('FlushDeadLetters');
  const flushFn = () => fns.find((f) => f.path === flushFunctionPath)!;
  const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
  const sorted = (actions: string[]) => [...actions].sort();

  /** Queue logical id → the sqs actions a set of statements allows on it (sorted). */
  const sqsGrantsOf = (statements: PolicyStatementJson[]) => {
    const grants: Record<string, string[]> = {};
    for (const s of statements) {
      const actions = actionsOf(s).filter((a) => a.startsWith('sqs:'));
      if (actions.length === 0) continue;
      expect(s.Effect).toBe('Allow');
      for (const resource of resourcesOf(s)) {
        // Only whole queue ARNs: no wildcard, no other resource.
        const id = refId(resource)!;
        // Other consumers' dead-letter destinations are checked with their consumers.
        if (!cdkPath(main.json.Resources[id]!).startsWith('ChatRelay/Dispatch/')) continue;
        expect([id, resource]).toEqual([id, arnOf(id)]);
        grants[id] = sorted([...(grants[id] ?? []), ...actions]);
      }
    }
    return grants;
  };

  it(
    'has four queues: the batch queue and its dead-letter queue (FIFO), the flush queue and its dead-letter queue ' +
      '(standard)',
    () => {
      const queues = resourcesOfType(main.json, 'AWS::SQS::Queue').filter(([, q]) => cdkPath(q).includes('/Dispatch/'));
      expect(queues).toHaveLength(4);
      for (const [, props] of [batches(), batchDlq()]) expect(props.FifoQueue).toBe(true);
      for (const [, props] of [flushes(), flushDlq()]) expect(props.FifoQueue).toBeUndefined();
      // Each keeps messages the longest SQS allows (a lost batch message breaks its chat's order
      // until a claim restores it), as the local queues do: one number.
      for (const [id, queue] of queues)
        expect([id, queue.Properties?.MessageRetentionPeriod]).toEqual([id, 14 * 86_400]);
      expect(QUEUE_RETENTION_SECONDS).toBe(14 * 86_400);
    },
  );

  it(
    'batch queue: FIFO without content-based deduplication, 30 s visibility, no default long-poll, 14 days, dead ' +
      'letters after 100 receives',
    () => {
      expect(batches()[1]).toEqual({
        FifoQueue: true,
        ContentBasedDeduplication: false,
        VisibilityTimeout: 30,
        ReceiveMessageWaitTimeSeconds: 0,
        MessageRetentionPeriod: 14 * 86_400,
        SqsManagedSseEnabled: true,
        // Claims re-receive waiting batches on purpose: a low count would dead-letter healthy ones.
        RedrivePolicy: { deadLetterTargetArn: arnOf(batchDlq()[0]), maxReceiveCount: 100 },
      });
      expect(batchDlq()[1]).toEqual({
        FifoQueue: true,
        ContentBasedDeduplication: false,
        MessageRetentionPeriod: 14 * 86_400,
        SqsManagedSseEnabled: true,
      });
    },
  );

  it('flush queue: standard, 14 days, dead letters after 5 receives, visibility at least 6x the flush function timeout', () => {
    const [, props] = flushes();
    expect(props.RedrivePolicy).toEqual({ deadLetterTargetArn: arnOf(flushDlq()[0]), maxReceiveCount: 5 });
    expect(props.MessageRetentionPeriod).toBe(14 * 86_400);
    expect(flushFn().props.Timeout).toBe(30);
    expect(props.VisibilityTimeout).toBeGreaterThanOrEqual(6 * flushFn().props.Timeout);
    expect(flushDlq()[1]).toEqual({ MessageRetentionPeriod: 14 * 86_400, SqsManagedSseEnabled: true });
  });

  it('every queue is SSE-SQS encrypted and refuses requests without TLS', () => {
    const policies = resourcesOfType(main.json, 'AWS::SQS::QueuePolicy').map(([, p]) => p.Properties ?? {});
    for (const [id, props] of [batches(), batchDlq(), flushes(), flushDlq()]) {
      expect([id, props.SqsManagedSseEnabled, props.KmsMasterKeyId]).toEqual([id, true, undefined]);
      const statements = policies
        .filter((p) => (p.Queues as unknown[]).some((q) => refId(q) === id))
        .flatMap((p) => p.PolicyDocument.Statement as PolicyStatementJson[]);
      expect([id, statements]).toEqual([
        id,
        [
          expect.objectContaining({
            Effect: 'Deny',
            Action: 'sqs:*',
            Resource: arnOf(id),
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ],
      ]);
    }
  });

  it(
    'the flush queue feeds the flush function: batches of 10, no batching window, partial batch failures ' + 'reported',
    () => {
      const mappings = resourcesOfType(main.json, 'AWS::Lambda::EventSourceMapping')
        .map(([, m]) => m.Properties ?? {})
        .filter((m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: flushFn().id }));
      expect(mappings).toEqual([
        {
          EventSourceArn: arnOf(flushes()[0]),
          FunctionName: { Ref: flushFn().id },
          BatchSize: 10,
          MaximumBatchingWindowInSeconds: 0,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        },
      ]);
    },
  );

  it(
    'runs functions/jobs/flush.ts on arm64 Node.js 22 with the table (read-write), the configuration and both ' +
      'queue URLs',
    () => {
      const fn = flushFn();
      expect([fn.props.Runtime, fn.props.Architectures, fn.props.Handler, fn.props.MemorySize]).toEqual([
        'nodejs22.x',
        ['arm64'],
        'index.handler',
        1024,
      ]);
      const env = fn.props.Environment.Variables as Record<string, unknown>;
      expect(refId(env.TABLE_NAME)).toBe(tableId);
      expect(JSON.parse(env.INSTANCE_CONFIG as string).appName).toBe('OpenGram');
      // It also runs the stream checks, which may start the stream-timeout loop.
      expect(env.STREAM_TIMEOUT_STATE_MACHINE_ARN).toEqual({ Ref: stateMachineId });
      expect(dynamoActions(fn.statements)).toEqual(
        expect.arrayContaining([
          'dynamodb:GetItem',
          'dynamodb:Query',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
        ]),
      );
      const assetDir = join(main.outdir, String(main.json.Resources[fn.id]!.Metadata?.['aws:asset:path']));
      expect(readFileSync(join(assetDir, 'index.mjs'), 'utf8')).toContain('batchItemFailures');
    },
  );

  it(
    'gives the claim routes (long-polls up to 25 s) and the media finalize (a 50 MB image) 29 s, the push test ' +
      '(waits for deliveries) 25 s, the auto-rename check (one 15 s provider call) 20 s, and every other route 15 s',
    () => {
      const longer = apiRoutes.filter((r) => r.timeoutSeconds !== undefined);
      expect(longer.map((r) => [routeKey(r), r.timeoutSeconds]).sort()).toEqual([
        ['POST /api/v1/chats/{chatId}/media/uploads/{uploadId}/complete', 29],
        ['POST /api/v1/config/admin/validate-auto-rename', 20],
        ['POST /api/v1/dispatch/claim', 29],
        ['POST /api/v1/dispatch/claim-many', 29],
        ['POST /api/v1/push/test', 25],
      ]);
      for (const route of apiRoutes) {
        const expected = route.timeoutSeconds ?? 15;
        expect([routeKey(route), fnAt(routeId(route)).props.Timeout]).toEqual([routeKey(route), expected]);
      }
    },
  );

  it(
    'gives the queue URLs and exactly the queue actions they use to the dispatch and dispatchInputs routes and the ' +
      'flush function, and nothing to any other function',
    () => {
      const all = apiRoutes;
      const workerPaths = new Set(all.filter((r) => r.dispatch).map((r) => functionPathOf(routeId(r))));
      const inputPaths = new Set(all.filter((r) => r.dispatchInputs).map((r) => functionPathOf(routeId(r))));
      // The stream-creating routes send their checks on the flush queue (checked with the stream timeouts).
      // So do the routes that set request deadline timers (§5.5.6).
      const timerPaths = new Set(
        all.filter((r) => r.streamTimer || r.requestTimer).map((r) => functionPathOf(routeId(r))),
      );
      expect([workerPaths.size, inputPaths.size]).toEqual([5, 3]);
      const batchId = batches()[0];
      const flushId = flushes()[0];
      const send = ['sqs:SendMessage'];
      const expectedGrants = (path: string): Record<string, string[]> => {
        if (workerPaths.has(path)) {
          return {
            [batchId]: sorted(['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage']),
            [flushId]: send,
          };
        }
        if (inputPaths.has(path)) return { [batchId]: send, [flushId]: send };
        // The sweeper also repairs batch messages (visibility, delete) after failed queue calls.
        if (path === sweepFunctionPath)
          return { [batchId]: sorted([...send, 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage']), [flushId]: send };
        if (path === flushFunctionPath) {
          // SendMessage itself; the rest is what the event source's poller needs (CDK's consume grant).
          return {
            [batchId]: send,
            [flushId]: sorted([
              'sqs:SendMessage',
              'sqs:ReceiveMessage',
              'sqs:ChangeMessageVisibility',
              'sqs:DeleteMessage',
              'sqs:GetQueueAttributes',
              'sqs:GetQueueUrl',
            ]),
          };
        }
        if (timerPaths.has(path)) return { [flushId]: send };
        return {};
      };
      for (const fn of fns) {
        const env = fn.props.Environment.Variables as Record<string, unknown>;
        const expected = expectedGrants(fn.path);
        const bound = Object.keys(expected).length > 0;
        expect([fn.path, sqsGrantsOf(fn.statements)]).toEqual([fn.path, expected]);
        expect([fn.path, env.DISPATCH_QUEUE_URL, env.FLUSH_QUEUE_URL]).toEqual([
          fn.path,
          expected[batchId] ? { Ref: batchId } : undefined,
          bound ? { Ref: flushId } : undefined,
        ]);
        // The local emulator's endpoint is never deployed.
        expect([fn.path, env.SQS_ENDPOINT]).toEqual([fn.path, undefined]);
      }
      // No other role of the stack may use the queues either (the queue policies only deny).
      const boundRoles = new Set(
        fns.filter((f) => Object.keys(expectedGrants(f.path)).length > 0).map((f) => f.roleId),
      );
      // Workers, input routes, the sweeper, the flush consumer, and the two deadline-setting routes.
      expect(boundRoles.size).toBe(5 + 3 + 1 + 1 + 2);
      for (const [id, policy] of resourcesOfType(main.json, 'AWS::IAM::Policy')) {
        const roles = (policy.Properties?.Roles as unknown[]).map(refId);
        const statements = policy.Properties?.PolicyDocument.Statement as PolicyStatementJson[];
        const onDispatchQueues = (s: PolicyStatementJson) =>
          resourcesOf(s).some((r) =>
            cdkPath(main.json.Resources[refId(r) ?? ''] ?? { Type: '' }).includes('/Dispatch/'),
          );
        if (statements.some((s) => actionsOf(s).some((a) => a.startsWith('sqs:')) && onDispatchQueues(s))) {
          expect([id, roles.every((r) => boundRoles.has(r!))]).toEqual([id, true]);
        }
      }
    },
  );

  it('alarms (without actions) when either dead-letter queue has visible messages', () => {
    const alarms = resourcesOfType(main.json, 'AWS::CloudWatch::Alarm')
      .filter(([, a]) => cdkPath(a).includes('/Dispatch/'))
      .map(([, a]) => a.Properties ?? {});
    expect(alarms).toHaveLength(2);
    const watched = alarms.map((alarm) => {
      expect(alarm).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      expect(alarm.AlarmActions).toBeUndefined();
      const dimensions = alarm.Dimensions as { Name: string; Value: unknown }[];
      expect(dimensions.map((d) => d.Name)).toEqual(['QueueName']);
      return dimensions[0]!.Value;
    });
    expect(watched).toEqual(
      expect.arrayContaining([
        { 'Fn::GetAtt': [batchDlq()[0], 'QueueName'] },
        { 'Fn::GetAtt': [flushDlq()[0], 'QueueName'] },
      ]),
    );
    // The flush dead letters include stream checks (the flush queue carries them).
    const flushDlqName = JSON.stringify({ 'Fn::GetAtt': [flushDlq()[0], 'QueueName'] });
    const flushAlarms = alarms.filter(
      (a) => JSON.stringify((a.Dimensions as { Value: unknown }[])[0]!.Value) === flushDlqName,
    );
    expect(flushAlarms.map((a) => a.AlarmDescription)).toEqual([
      'Dead-lettered flush signals or stream checks: messages visible on their dead-letter queue.',
    ]);
  });

  it('runs the dispatch sweeper every minute from an EventBridge schedule, with table access and no retries', () => {
    const sweep = fns.find((f) => f.path === sweepFunctionPath)!;
    const rules = resourcesOfType(main.json, 'AWS::Events::Rule').map(([, r]) => r.Properties ?? {});
    const sweepRules = rules.filter((r) =>
      (r.Targets as any[] | undefined)?.some(
        (t) => JSON.stringify(t.Arn) === JSON.stringify({ 'Fn::GetAtt': [sweep.id, 'Arn'] }),
      ),
    );
    expect(sweepRules).toHaveLength(1);
    expect(sweepRules[0]).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect((sweepRules[0]!.Targets as any[])[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 0 });
    // EventBridge may invoke it, nothing else.
    const permissions = resourcesOfType(main.json, 'AWS::Lambda::Permission')
      .map(([, p]) => p.Properties ?? {})
      .filter((p) => JSON.stringify(p.FunctionName) === JSON.stringify({ 'Fn::GetAtt': [sweep.id, 'Arn'] }));
    expect(permissions.map((p) => p.Principal)).toEqual(['events.amazonaws.com']);
    expect(sweep.statements.flatMap(actionsOf)).toEqual(
      expect.arrayContaining(['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem']),
    );
    const assetDir = join(main.outdir, String(main.json.Resources[sweep.id]!.Metadata?.['aws:asset:path']));
    expect(readFileSync(join(assetDir, 'index.mjs'), 'utf8')).toContain('DISPATCH#PENDING');
  });

  it('outputs both queue URLs and the three dead-letter queue names', () => {
    const outputs = main.json.Outputs ?? {};
    expect(outputs.DispatchQueueUrl?.Value).toEqual({ Ref: batches()[0] });
    expect(outputs.FlushQueueUrl?.Value).toEqual({ Ref: flushes()[0] });
    // Its double role is in its description.
    expect(outputs.FlushQueueUrl?.Description).toMatch(/flush signals .*stream checks/);
    expect(outputs.DispatchDeadLetterQueueName?.Value).toEqual({ 'Fn::GetAtt': [batchDlq()[0], 'QueueName'] });
    expect(outputs.FlushDeadLetterQueueName?.Value).toEqual({ 'Fn::GetAtt': [flushDlq()[0], 'QueueName'] });
    const [streamDlq] = resourcesOfType(main.json, 'AWS::SQS::Queue').find(
      ([, q]) => cdkPath(q) === 'ChatRelay/StreamDeadLetters/Queue/Resource',
    )!;
    expect(outputs.StreamDeadLetterQueueName?.Value).toEqual({ 'Fn::GetAtt': [streamDlq, 'QueueName'] });
  });
});

describe('tag catalog sweeper', () => {
  it('runs the tag catalog sweeper every minute from an EventBridge schedule, with table access and no retries', () => {
    const sweep = fns.find((f) => f.path === tagSweepFunctionPath)!;
    const rules = resourcesOfType(main.json, 'AWS::Events::Rule').map(([, r]) => r.Properties ?? {});
    const sweepRules = rules.filter((r) =>
      (r.Targets as any[] | undefined)?.some(
        (t) => JSON.stringify(t.Arn) === JSON.stringify({ 'Fn::GetAtt': [sweep.id, 'Arn'] }),
      ),
    );
    expect(sweepRules).toHaveLength(1);
    expect(sweepRules[0]).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect((sweepRules[0]!.Targets as any[])[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 0 });
    expect(sweep.statements.flatMap(actionsOf)).toEqual(
      expect.arrayContaining(['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']),
    );
    const assetDir = join(main.outdir, String(main.json.Resources[sweep.id]!.Metadata?.['aws:asset:path']));
    expect(readFileSync(join(assetDir, 'index.mjs'), 'utf8')).toContain('TAGS#PENDING');
  });
});

describe('media bucket', () => {
  const bucket = () => {
    const found = resourcesOfType(main.json, 'AWS::S3::Bucket').filter(([, b]) => cdkPath(b).includes('/Media/'));
    expect(found).toHaveLength(1);
    return { id: found[0]![0], resource: found[0]![1] };
  };

  it('is private, encrypted, TLS-only, retained, and aborts unfinished multipart uploads', () => {
    const { id, resource } = bucket();
    expect(resource.Properties?.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(resource.Properties?.BucketEncryption?.ServerSideEncryptionConfiguration).toEqual([
      { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
    ]);
    expect(resource.Properties?.OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerEnforced' }]);
    expect(resource.Properties?.LifecycleConfiguration?.Rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
      ]),
    );
    expect([resource.DeletionPolicy, resource.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    const policies = resourcesOfType(main.json, 'AWS::S3::BucketPolicy').filter(
      ([, p]) => refId(p.Properties?.Bucket) === id,
    );
    expect(policies).toHaveLength(1);
    const statements = policies[0]![1].Properties?.PolicyDocument?.Statement as PolicyStatementJson[];
    expect(statements).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        Principal: { AWS: '*' },
      }),
    ]);
  });

  it('is reachable only by the media routes, each with the actions it uses, on its prefixes only', () => {
    const { id } = bucket();
    const uses = new Map(
      apiRoutes.filter((r) => r.mediaBucket).map((r) => [functionPathOf(routeId(r)), r.mediaBucket!]),
    );
    expect([...uses.values()].sort()).toEqual(['delete', 'finalize', 'presign', 'read', 'read', 'write']);
    const objects = (prefix: string) =>
      JSON.stringify([{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id, 'Arn'] }, `/${prefix}*`]] }]);
    const list = (prefixes: string[]) => `ListBucket ${JSON.stringify({ StringLike: { 's3:prefix': prefixes } })}`;
    // Per use: "<resources>: <sorted actions>" lines.
    const expected: Record<string, string[]> = {
      read: [`${objects('uploads/')}: s3:GetObject`, list(['uploads/*'])],
      write: [`${objects('uploads/')}: s3:DeleteObject,s3:PutObject`],
      delete: [`${objects('uploads/')}: s3:DeleteObject`],
      presign: [`${objects('pending/')}: s3:PutObject`],
      finalize: [
        `${objects('pending/')}: s3:DeleteObject,s3:GetObject`,
        `${objects('uploads/')}: s3:DeleteObject,s3:PutObject`,
        list(['pending/*']),
      ],
    };
    for (const fn of fns) {
      const s3Statements = fn.statements.filter(
        (st) => actionsOf(st).some((a) => a.startsWith('s3:')) && JSON.stringify(resourcesOf(st)).includes(id),
      );
      const use = uses.get(fn.path);
      const env = fn.props.Environment.Variables as Record<string, unknown>;
      if (!use) {
        expect([fn.path, s3Statements, env.MEDIA_BUCKET]).toEqual([fn.path, [], undefined]);
        continue;
      }
      expect([fn.path, env.MEDIA_BUCKET]).toEqual([fn.path, { Ref: id }]);
      const lines = s3Statements.map((st) => {
        expect(st.Effect).toBe('Allow');
        if (actionsOf(st).includes('s3:ListBucket')) {
          expect(resourcesOf(st)).toEqual([{ 'Fn::GetAtt': [id, 'Arn'] }]);
          return `ListBucket ${JSON.stringify(st.Condition)}`;
        }
        return `${JSON.stringify(resourcesOf(st))}: ${actionsOf(st).sort().join(',')}`;
      });
      expect([fn.path, lines.sort()]).toEqual([fn.path, [...expected[use]!].sort()]);
    }
  });

  it('expires the files of upload sessions never finalized after a day', () => {
    expect(bucket().resource.Properties?.LifecycleConfiguration?.Rules).toEqual(
      expect.arrayContaining([expect.objectContaining({ Prefix: 'pending/', ExpirationInDays: 1, Status: 'Enabled' })]),
    );
  });
});

describe('search index', () => {
  const searchBucketId = () => {
    const found = resourcesOfType(main.json, 'AWS::S3::Bucket').filter(([, b]) => cdkPath(b).includes('/Search/'));
    expect(found).toHaveLength(1);
    return found[0]![0];
  };
  const writer = () => fns.find((f) => f.path === searchWriterPath)!;

  it('keeps segments in a private, encrypted, TLS-only, retained bucket', () => {
    const resource = main.json.Resources[searchBucketId()]!;
    expect(resource.Properties?.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(resource.Properties?.BucketEncryption?.ServerSideEncryptionConfiguration).toEqual([
      { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
    ]);
    expect([resource.DeletionPolicy, resource.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    const policy = resourcesOfType(main.json, 'AWS::S3::BucketPolicy').find(
      ([, p]) => refId(p.Properties?.Bucket) === searchBucketId(),
    );
    expect(policy?.[1].Properties?.PolicyDocument?.Statement).toEqual([
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    ]);
  });

  it('lets only the search routes read segments and only the writer change them, under segments/', () => {
    const id = searchBucketId();
    const segments = JSON.stringify([{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id, 'Arn'] }, '/segments/*']] }]);
    const readers = new Set(apiRoutes.filter((r) => r.searchIndex).map((r) => functionPathOf(routeId(r))));
    expect([...readers]).toEqual([functionPathOf(routeId(apiRoutes.find((r) => r.handler === 'search/get')!))]);
    for (const fn of fns) {
      const lines = fn.statements
        .filter((st) => JSON.stringify(resourcesOf(st)).includes(id))
        .map((st) => `${JSON.stringify(resourcesOf(st))}: ${actionsOf(st).sort().join(',')}`);
      const env = (fn.props.Environment?.Variables ?? {}) as Record<string, unknown>;
      if (fn.path === searchWriterPath) {
        expect(lines).toEqual([`${segments}: s3:DeleteObject,s3:GetObject,s3:PutObject`]);
      } else if (readers.has(fn.path)) {
        expect(lines).toEqual([`${segments}: s3:GetObject`]);
        expect(fn.props.EphemeralStorage).toEqual({ Size: 2048 });
      } else {
        expect([fn.path, lines, env.SEARCH_BUCKET]).toEqual([fn.path, [], undefined]);
        continue;
      }
      expect([fn.path, env.SEARCH_BUCKET]).toEqual([fn.path, { Ref: id }]);
    }
  });

  it('runs one writer on the table stream, fed only message events that can carry searchable text', () => {
    const fn = writer();
    expect([fn.props.ReservedConcurrentExecutions, fn.props.EphemeralStorage, fn.props.Timeout]).toEqual([
      1,
      { Size: 2048 },
      300,
    ]);
    const mappings = resourcesOfType(main.json, 'AWS::Lambda::EventSourceMapping')
      .map(([, m]) => m.Properties ?? {})
      .filter((m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: fn.id }));
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]!;
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      ParallelizationFactor: 1,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 5,
    });
    const filters = (mapping.FilterCriteria.Filters as { Pattern: string }[]).map((f) => JSON.parse(f.Pattern));
    expect(filters).toEqual([
      {
        eventName: ['INSERT'],
        dynamodb: {
          NewImage: {
            type: { S: ['event'] },
            eventType: { S: ['message.created'] },
            payload: { M: { contentFinal: { S: [{ exists: true }] } } },
          },
        },
      },
      {
        eventName: ['INSERT'],
        dynamodb: {
          NewImage: {
            type: { S: ['event'] },
            eventType: { S: ['message.streaming.complete'] },
            payload: { M: { streamState: { S: ['complete'] } } },
          },
        },
      },
    ]);
    const dlq = refId(
      mapping.DestinationConfig?.OnFailure?.Destination?.['Fn::GetAtt']?.[0]
        ? { Ref: mapping.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0] }
        : undefined,
    );
    expect(cdkPath(main.json.Resources[dlq!]!)).toBe('ChatRelay/StreamDeadLetters/Queue/Resource');
    const alarms = resourcesOfType(main.json, 'AWS::CloudWatch::Alarm').filter(([, a]) =>
      JSON.stringify(a.Properties?.Dimensions ?? a.Properties?.Metrics ?? '').includes(dlq!),
    );
    expect(alarms).toHaveLength(1);
  });
});

describe('event effects (push, webhooks, auto-rename)', () => {
  const effects = () => fns.find((f) => f.path === effectsPath)!;

  it('the table stream has two readers: the search index writer and the effects consumer', () => {
    const readers = resourcesOfType(main.json, 'AWS::Lambda::EventSourceMapping')
      .map(([, m]) => m.Properties ?? {})
      .filter((m) => JSON.stringify(m.EventSourceArn).includes('StreamArn'))
      .map((m) => fns.find((f) => f.id === refId(m.FunctionName))!.path);
    expect(readers.sort()).toEqual([effectsPath, searchWriterPath].sort());
  });

  it('runs functions/jobs/event-effects.ts with the table (read-write) and its stream, and no bucket or secret', () => {
    const fn = effects();
    expect([fn.props.Timeout, fn.props.MemorySize, fn.props.Handler]).toEqual([300, 512, 'index.handler']);
    expect(dynamoActions(fn.statements)).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:DescribeStream',
        'dynamodb:ListStreams',
      ]),
    );
    // Beside the table and its logs, only sending given-up records to its own dead-letter queue (no
    // stored secret: it checks no auth; with push off no VAPID pair either, see web-push.test.ts).
    const other = fn.statements.flatMap(actionsOf).filter((a) => !/^(dynamodb|logs):/.test(a));
    expect([...new Set(other)].sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
    expect((fn.props.Environment.Variables as Record<string, unknown>).STORED_SECRETS).toBeUndefined();
    const queues = fn.statements
      .filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')))
      .flatMap(resourcesOf)
      .map((r) => cdkPath(main.json.Resources[refId(r)!]!));
    expect([...new Set(queues)]).toEqual(['ChatRelay/StreamDeadLetters/Queue/Resource']);
    const env = fn.props.Environment.Variables as Record<string, unknown>;
    expect(refId(env.TABLE_NAME)).toBe(tableId);
    expect(Object.keys(env).filter((k) => /API_KEY|BASE_URL|SECRET|BUCKET|QUEUE/.test(k))).toEqual([
      'INSTANCE_SECRET_IN_TABLE',
    ]);
  });

  it('is fed only new persisted events, partial failures retried, then dead-lettered (alarmed)', () => {
    const mappings = resourcesOfType(main.json, 'AWS::Lambda::EventSourceMapping')
      .map(([, m]) => m.Properties ?? {})
      .filter((m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: effects().id }));
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]!;
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
      StartingPosition: 'LATEST',
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: 0,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 3,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect((mapping.FilterCriteria.Filters as { Pattern: string }[]).map((f) => JSON.parse(f.Pattern))).toEqual([
      {
        eventName: ['INSERT'],
        dynamodb: { NewImage: { type: { S: ['event'] }, eventType: { S: [{ exists: true }] } } },
      },
    ]);
    const dlqId = mapping.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0] as string;
    // The stream consumers share one dead-letter queue (lib/constructs/stream-consumer.ts).
    expect(cdkPath(main.json.Resources[dlqId]!)).toBe('ChatRelay/StreamDeadLetters/Queue/Resource');
    expect(main.json.Resources[dlqId]!.Properties).toEqual({
      MessageRetentionPeriod: 14 * 86_400,
      SqsManagedSseEnabled: true,
    });
    const alarms = resourcesOfType(main.json, 'AWS::CloudWatch::Alarm').filter(([, a]) =>
      JSON.stringify(a.Properties?.Dimensions ?? '').includes(dlqId),
    );
    expect(alarms).toHaveLength(1);
    expect(alarms[0]![1].Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });
});

describe('single base URL (CloudFront)', () => {
  const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
  const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';
  const distributions = (json: CfnTemplate) => resourcesOfType(json, 'AWS::CloudFront::Distribution');
  const configOf = (json: CfnTemplate) =>
    distributions(json)[0]![1].Properties!.DistributionConfig as Record<string, any>;
  const originById = (config: Record<string, any>, id: string) => (config.Origins as any[]).find((o) => o.Id === id);
  const domainOf = (resourceId: string, attribute: string) => ({
    'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': [resourceId, attribute] }] }],
  });
  const httpApiId = () => resourcesOfType(main.json, 'AWS::ApiGatewayV2::Api')[0]![0];
  const functionUrlId = () => resourcesOfType(main.json, 'AWS::Lambda::Url')[0]![0];

  it(
    'sends the stream path to the function URL and /api/* to the HTTP API, in that order, passing requests ' +
      'through uncached; everything else to the web app',
    () => {
      expect(distributions(main.json)).toHaveLength(1);
      const config = configOf(main.json);
      const passThrough = {
        CachePolicyId: CACHING_DISABLED,
        OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
        Compress: false,
        ViewerProtocolPolicy: 'https-only',
      };
      // CloudFront takes the first pattern that matches: the stream's must come before /api/*.
      expect(config.CacheBehaviors.map((b: { PathPattern: string }) => b.PathPattern)).toEqual([
        `${streamRoute.path}*`,
        API_PATH_PATTERN,
        MEDIA_UPLOAD_PATH,
      ]);
      const [stream, api] = config.CacheBehaviors;
      expect(api).toMatchObject(passThrough);
      expect([...api.AllowedMethods].sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
      expect(originById(config, api.TargetOriginId)).toMatchObject({
        DomainName: domainOf(httpApiId(), 'ApiEndpoint'),
        CustomOriginConfig: {
          OriginProtocolPolicy: 'https-only',
          OriginReadTimeout: 45,
          OriginSSLProtocols: ['TLSv1.2'],
        },
      });
      // The viewer's Host, copied for the cross-site check of cookie writes (edge.ts).
      expect(api.FunctionAssociations).toHaveLength(1);
      expect(api.FunctionAssociations[0].EventType).toBe('viewer-request');
      const viewerHost = main.json.Resources[refId(api.FunctionAssociations[0].FunctionARN)!]!;
      expect(viewerHost.Type).toBe('AWS::CloudFront::Function');
      expect(viewerHost.Properties?.FunctionCode).toBe(viewerHostCode);
      expect(stream).toMatchObject({ ...passThrough, PathPattern: `${streamRoute.path}*` });
      expect(stream.FunctionAssociations).toBeUndefined();
      expect([...stream.AllowedMethods].sort()).toEqual(['GET', 'HEAD', 'OPTIONS']);
      expect(originById(config, stream.TargetOriginId)).toMatchObject({
        DomainName: domainOf(functionUrlId(), 'FunctionUrl'),
        CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginReadTimeout: 30 },
      });
      // The API's answers keep their own headers (a media download its sandbox CSP): no policy there.
      for (const behavior of [stream, api]) expect(behavior.ResponseHeadersPolicyId).toBeUndefined();
      // Every route of the API, its catch-all included, is under /api: nothing else needs the API origin.
      for (const route of routes) expect([route.path, route.path.startsWith('/api/')]).toEqual([route.path, true]);
      expect(originById(config, config.DefaultCacheBehavior.TargetOriginId).S3OriginConfig).toBeDefined();
      expect(config).toMatchObject({ Enabled: true, HttpVersion: 'http2and3', PriceClass: 'PriceClass_100' });
      expect(config.Aliases).toBeUndefined();
    },
  );

  it(
    "sends the web app's upload path to the media bucket: POST only, to the bucket's root, uncached, without " +
      'origin access control (the signed form authorizes); the session route is told the path',
    async () => {
      const config = configOf(main.json);
      const upload = config.CacheBehaviors.find((b: Record<string, any>) => b.PathPattern === MEDIA_UPLOAD_PATH);
      expect(upload).toMatchObject({
        CachePolicyId: CACHING_DISABLED,
        OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
        Compress: false,
        ViewerProtocolPolicy: 'https-only',
      });
      expect(upload.AllowedMethods).toContain('POST');
      const mediaBucketId = resourcesOfType(main.json, 'AWS::S3::Bucket').find(([, b]) =>
        cdkPath(b).includes('/Media/'),
      )![0];
      const origin = originById(config, upload.TargetOriginId);
      expect(origin.DomainName).toEqual({ 'Fn::GetAtt': [mediaBucketId, 'RegionalDomainName'] });
      expect(origin.OriginAccessControlId).toBeUndefined();
      expect(origin.S3OriginConfig).toEqual({ OriginAccessIdentity: '' });
      // Its function: POST goes on to "/", anything else is answered 405 at the edge.
      expect(upload.FunctionAssociations).toHaveLength(1);
      expect(upload.FunctionAssociations[0].EventType).toBe('viewer-request');
      const [, fn] = resourcesOfType(main.json, 'AWS::CloudFront::Function').find(
        ([id]) => upload.FunctionAssociations[0].FunctionARN['Fn::GetAtt'][0] === id,
      )!;
      const code = fn.Properties!.FunctionCode as string;
      expect(code).toBe(mediaUploadCode);
      const handler = new Function(`${code}; return handler;`)() as (e: unknown) => Record<string, unknown>;
      expect(handler({ request: { method: 'POST', uri: '/media-upload', headers: {} } })).toMatchObject({ uri: '/' });
      expect(handler({ request: { method: 'GET', uri: '/media-upload', headers: {} } })).toEqual({
        statusCode: 405,
        statusDescription: 'Method Not Allowed',
      });
      // Only the route that opens sessions hands out the path.
      const told = fns.filter((f) => (f.props.Environment.Variables as Record<string, unknown>).MEDIA_UPLOAD_PATH);
      expect(
        told.map((f) => [f.path, (f.props.Environment.Variables as Record<string, unknown>).MEDIA_UPLOAD_PATH]),
      ).toEqual([[functionPathOf(routeId(apiRoutes.find((r) => r.mediaBucket === 'presign')!)), MEDIA_UPLOAD_PATH]]);
    },
  );

  it('outputs the distribution as BaseUrl', () => {
    const output = main.json.Outputs?.BaseUrl;
    expect(output?.Value).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributions(main.json)[0]![0], 'DomainName'] }, '/']],
    });
    expect(output?.Description).toContain('server.publicBaseUrl');
  });

  it('serves a custom domain with its certificate over TLS 1.2+, and says so in BaseUrl', () => {
    const certificateArn = 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-0000-4000-8000-123456789abc';
    const synth = synthesize({ domain: { name: 'relay.example.com', certificateArn } });
    try {
      const config = configOf(synth.json);
      expect(config.Aliases).toEqual(['relay.example.com']);
      expect(config.ViewerCertificate).toEqual({
        AcmCertificateArn: certificateArn,
        MinimumProtocolVersion: 'TLSv1.2_2021',
        SslSupportMethod: 'sni-only',
      });
      expect(synth.json.Outputs?.BaseUrl?.Value).toBe('https://relay.example.com/');
      // With its own certificate the TLS finding (CFR4) is no longer acknowledged, and none remains.
      expect(nagFindings(synth.stack)).toEqual([]);
    } finally {
      synth.dispose();
    }
  });
});

describe('web app hosting (issue 26)', () => {
  const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';
  const webPath = 'ChatRelay/Web/';
  const ofWeb = (type: string) => resourcesOfType(main.json, type).filter(([, r]) => cdkPath(r).startsWith(webPath));
  const distributionId = () => resourcesOfType(main.json, 'AWS::CloudFront::Distribution')[0]![0];
  const configOf = () =>
    resourcesOfType(main.json, 'AWS::CloudFront::Distribution')[0]![1].Properties!.DistributionConfig as Record<
      string,
      any
    >;
  const bucketId = () => ofWeb('AWS::S3::Bucket')[0]![0];

  /** The headers a response-headers policy adds, as a browser sees them. */
  function headersOf(policy: Record<string, any>): Record<string, string> {
    const security = policy.SecurityHeadersConfig ?? {};
    const headers: Record<string, string> = {};
    const set = (name: string, setting: { Override?: boolean } | undefined, value: () => string) => {
      if (!setting) return;
      expect([name, setting.Override]).toEqual([name, true]);
      headers[name] = value();
    };
    set(
      'content-security-policy',
      security.ContentSecurityPolicy,
      () => security.ContentSecurityPolicy.ContentSecurityPolicy,
    );
    set('strict-transport-security', security.StrictTransportSecurity, () => {
      const hsts = security.StrictTransportSecurity;
      return [
        `max-age=${hsts.AccessControlMaxAgeSec}`,
        hsts.IncludeSubdomains && 'includeSubDomains',
        hsts.Preload && 'preload',
      ]
        .filter(Boolean)
        .join('; ');
    });
    set('x-frame-options', security.FrameOptions, () => security.FrameOptions.FrameOption);
    set('x-content-type-options', security.ContentTypeOptions, () => 'nosniff');
    set('referrer-policy', security.ReferrerPolicy, () => security.ReferrerPolicy.ReferrerPolicy);
    set('x-xss-protection', security.XSSProtection, () => JSON.stringify(security.XSSProtection));
    for (const item of policy.CustomHeadersConfig?.Items ?? []) {
      set(String(item.Header).toLowerCase(), item, () => item.Value);
    }
    return headers;
  }

  it('keeps the build in a private bucket: public access blocked, TLS only, S3-managed encryption, no website', () => {
    const buckets = ofWeb('AWS::S3::Bucket');
    expect(buckets).toHaveLength(1);
    const [, bucket] = buckets[0]!;
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    expect(bucket.Properties?.WebsiteConfiguration).toBeUndefined();
    expect(bucket.DeletionPolicy).toBe('Retain');
  });

  it('lets CloudFront read it through Origin Access Control, this distribution only, and no one else', () => {
    const policies = resourcesOfType(main.json, 'AWS::S3::BucketPolicy').filter(
      ([, p]) => refId(p.Properties?.Bucket) === bucketId(),
    );
    expect(policies).toHaveLength(1);
    const statements = policies[0]![1].Properties!.PolicyDocument.Statement as (PolicyStatementJson & {
      Principal: unknown;
    })[];
    const allows = statements.filter((st) => st.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    const [read] = allows;
    expect(read!.Principal).toEqual({ Service: 'cloudfront.amazonaws.com' });
    // Get, and List so that a missing file is 404 rather than 403; never a write.
    expect(actionsOf(read!).sort()).toEqual(['s3:GetObject', 's3:ListBucket']);
    expect(joinedString(read!.Condition?.StringEquals?.['AWS:SourceArn'])).toBe(
      `arn:\${AWS::Partition}:cloudfront::\${AWS::AccountId}:distribution/\${${distributionId()}}`,
    );
    // The rest denies every request without TLS.
    const denies = statements.filter((st) => st.Effect === 'Deny');
    expect(denies).toHaveLength(1);
    expect(denies[0]!.Condition).toEqual({ Bool: { 'aws:SecureTransport': 'false' } });

    const config = configOf();
    const origin = (config.Origins as any[]).find((o) => o.Id === config.DefaultCacheBehavior.TargetOriginId);
    expect(origin.DomainName).toEqual({ 'Fn::GetAtt': [bucketId(), 'RegionalDomainName'] });
    expect(origin.S3OriginConfig).toEqual({ OriginAccessIdentity: '' });
    const oac = main.json.Resources[refId(origin.OriginAccessControlId)!]!;
    expect(oac.Type).toBe('AWS::CloudFront::OriginAccessControl');
    expect(oac.Properties?.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
  });

  it("serves it as the default behavior: GET and HEAD, HTTPS (redirected), cached by the files' own headers, compressed", () => {
    const behavior = configOf().DefaultCacheBehavior;
    expect(behavior).toMatchObject({
      CachePolicyId: CACHING_OPTIMIZED,
      Compress: true,
      ViewerProtocolPolicy: 'redirect-to-https',
    });
    expect([...behavior.AllowedMethods].sort()).toEqual(['GET', 'HEAD']);
    // No origin request policy: nothing of the viewer's request (cookies, Authorization) goes to S3.
    expect(behavior.OriginRequestPolicyId).toBeUndefined();
    // "/" is the app even without the fallback function: never the bucket's listing, so CDK's
    // warning about LIST access on the default behavior is acknowledged, and the synth warns nothing.
    expect(configOf().DefaultRootObject).toBe('index.html');
    expect(main.assemblyText()).not.toContain('aws:cdk:warning');
  });

  it('rewrites app routes to /index.html with a CloudFront Function on viewer request, on the default behavior only', () => {
    const behavior = configOf().DefaultCacheBehavior;
    expect(behavior.FunctionAssociations).toHaveLength(1);
    expect(behavior.FunctionAssociations[0].EventType).toBe('viewer-request');
    const fn = main.json.Resources[refId(behavior.FunctionAssociations[0].FunctionARN)!]!;
    expect([fn.Type, cdkPath(fn)]).toEqual(['AWS::CloudFront::Function', 'ChatRelay/Web/SpaFallback/Resource']);
    expect(fn.Properties).toMatchObject({
      AutoPublish: true,
      FunctionCode: spaFallbackCode,
      FunctionConfig: { Runtime: 'cloudfront-js-2.0' },
    });
    // Its code behaves as isAppRoute: test/infra/web-hosting.test.ts. No API behavior runs it.
    const fallbackId = refId(behavior.FunctionAssociations[0].FunctionARN);
    for (const other of configOf().CacheBehaviors as any[]) {
      const associated = (other.FunctionAssociations ?? []).map((a: any) => refId(a.FunctionARN));
      expect(associated).not.toContain(fallbackId);
    }
  });

  it("answers with lib/web-policy.ts's security headers, each value as declared there", () => {
    const behavior = configOf().DefaultCacheBehavior;
    const policy = main.json.Resources[refId(behavior.ResponseHeadersPolicyId)!]!;
    expect(policy.Type).toBe('AWS::CloudFront::ResponseHeadersPolicy');
    const config = policy.Properties!.ResponseHeadersPolicyConfig as Record<string, any>;
    // The CSP names the media bucket's origin, a token: a Join around its regional domain name.
    const mediaBuckets = resourcesOfType(main.json, 'AWS::S3::Bucket').filter(([, r]) =>
      cdkPath(r).startsWith('ChatRelay/Media/'),
    );
    expect(mediaBuckets).toHaveLength(1);
    const MEDIA = 'https://MEDIA-BUCKET-REGIONAL-DOMAIN';
    const headers = headersOf(config) as Record<string, unknown>;
    const csp = headers['content-security-policy'] as { 'Fn::Join': [string, unknown[]] };
    headers['content-security-policy'] = csp['Fn::Join'][1]
      .map((part) => {
        if (typeof part === 'string') return part;
        expect(part).toEqual({ 'Fn::GetAtt': [mediaBuckets[0]![0], 'RegionalDomainName'] });
        return MEDIA.slice('https://'.length);
      })
      .join(csp['Fn::Join'][0]);
    expect(headers).toEqual(webSecurityHeaders(MEDIA));
    const declared = webSecurityHeaders(MEDIA)['content-security-policy']!;
    expect(declared).toContain("frame-ancestors 'none'");
    expect(declared).toContain("connect-src 'self'");
    // Downloads over the inline limit are redirected to the bucket: images and media load from it, nothing else.
    expect(declared).toContain(`img-src 'self' blob: data: ${MEDIA};`);
    expect(declared).toContain(`media-src 'self' blob: ${MEDIA};`);
    expect(declared.split(MEDIA)).toHaveLength(3);
    expect(config.CorsConfig).toBeUndefined();
    expect(resourcesOfType(main.json, 'AWS::CloudFront::ResponseHeadersPolicy')).toHaveLength(1);
  });

  it('deploys the build in two passes: hashed assets cached a year and immutable first, then the rest no-cache', () => {
    const deployments = ofWeb('Custom::CDKBucketDeployment');
    expect(deployments).toHaveLength(2);
    const [assets, pages] = ['DeployAssets', 'DeployPages'].map((name) =>
      deployments.find(([, d]) => cdkPath(d).startsWith(`${webPath}${name}/`))!,
    );
    for (const [, deployment] of [assets!, pages!]) {
      expect(refId(deployment.Properties?.DestinationBucketName)).toBe(bucketId());
      expect(deployment.Properties).toMatchObject({ Prune: true, OutputObjectKeys: false });
      // No invalidation: index.html is no-cache and every other new file has a new name.
      expect(deployment.Properties?.DistributionId).toBeUndefined();
    }
    // One asset, one upload: both copy from it.
    expect(assets![1].Properties?.SourceObjectKeys).toEqual(pages![1].Properties?.SourceObjectKeys);
    expect(assets![1].Properties).toMatchObject({
      Exclude: ['*'],
      Include: [HASHED_ASSETS_FILTER],
      SystemMetadata: { 'cache-control': HASHED_CACHE_CONTROL },
    });
    expect(HASHED_ASSETS_FILTER).toBe('assets/*');
    expect(pages![1].Properties).toMatchObject({
      Exclude: [HASHED_ASSETS_FILTER],
      SystemMetadata: { 'cache-control': UNHASHED_CACHE_CONTROL },
    });
    expect(pages![1].Properties?.Include).toBeUndefined();
    // A new index.html never names an asset not yet copied.
    expect(pages![1].DependsOn).toContain(assets![0]);
    expect([HASHED_CACHE_CONTROL, UNHASHED_CACHE_CONTROL]).toEqual(['public, max-age=31536000, immutable', 'no-cache']);
  });

  it('runs one copier for both, with one AWS CLI layer, at a modest memory size', () => {
    const deployments = ofWeb('Custom::CDKBucketDeployment');
    const copiers = new Set(deployments.map(([, d]) => refId(d.Properties?.ServiceToken)));
    expect(copiers.size).toBe(1);
    const copier = main.json.Resources[[...copiers][0]!]!;
    expect(copier.Properties?.MemorySize).toBe(DEPLOYMENT_MEMORY_MB);
    const layers = resourcesOfType(main.json, 'AWS::Lambda::LayerVersion');
    expect(layers).toHaveLength(1);
    expect((copier.Properties?.Layers as unknown[]).map(refId)).toEqual([layers[0]![0]]);
  });

  it('stages the web build the stack was given as the deployment asset', () => {
    const key = String(ofWeb('Custom::CDKBucketDeployment')[0]![1].Properties?.SourceObjectKeys[0]);
    const staged = join(main.outdir, `asset.${key.replace(/\.zip$/, '')}`);
    expect(readFileSync(join(staged, 'index.html'), 'utf8')).toBe(
      readFileSync(join(FIXTURE_WEB_DIR, 'index.html'), 'utf8'),
    );
    expect(readdirSync(join(staged, 'assets'))).toEqual(readdirSync(join(FIXTURE_WEB_DIR, 'assets')));
  });
});

describe('cdk-nag', () => {
  it('reports no unacknowledged AwsSolutions error or warning', () => {
    expect(nagFindings(main.stack)).toEqual([]);
  });
});

describe('instance secret', () => {
  const sentinels = {
    instanceSecret: 's3cr3t-value-xyz',
    vapidPrivateKey: 'vapid-private-sentinel-123',
    signingSecret: 'hook-signing-sentinel-456',
    hookHeader: 'Bearer hook-header-sentinel-789',
    apiKey: 'rename-api-key-sentinel-000',
  };
  const secretConfig = {
    security: { instanceSecretEnabled: true, instanceSecret: sentinels.instanceSecret },
    push: {
      enabled: false,
      vapidPublicKey: 'public',
      vapidPrivateKey: sentinels.vapidPrivateKey,
      subject: 'mailto:a@example.com',
    },
    hooks: [
      {
        url: 'https://hooks.example.com/x',
        events: ['message.created'],
        signingSecret: sentinels.signingSecret,
        headers: { authorization: sentinels.hookHeader },
      },
    ],
    autoRename: { enabled: false, provider: 'anthropic', modelId: 'm', apiKey: sentinels.apiKey },
  };

  it('keeps every secret out of the template: the functions that check auth read it from the table', () => {
    const synth = synthesize({ config: secretConfig });
    try {
      const text = synth.assemblyText();
      expect(text).toContain('INSTANCE_SECRET_IN_TABLE'); // the assembly text is really what we searched
      for (const value of Object.values(sentinels)) expect([value, text.includes(value)]).toEqual([value, false]);
      // No Secrets Manager: no secret resource, no secretsmanager action, no dynamic reference.
      expect(resourcesOfType(synth.json, 'AWS::SecretsManager::Secret')).toEqual([]);
      expect(JSON.stringify(synth.json)).not.toMatch(/secretsmanager/i);
      for (const fn of allFunctionsOf(synth.json)) {
        expect([fn.path, fn.statements.flatMap(actionsOf).filter((a) => a.startsWith('secretsmanager:'))]).toEqual([
          fn.path,
          [],
        ]);
      }
      // The output says how to read the value, never the value.
      const command = JSON.stringify(synth.json.Outputs?.InstanceSecretCommand?.Value);
      expect(command).toContain('aws dynamodb get-item --consistent-read --table-name');
      expect(command).toContain('SECRET#INSTANCE');

      const secretFns = functionsOf(synth.json);
      expect(secretFns).toHaveLength(apiRoutes.length + extraFunctions);
      expect(secretFns.map((f) => f.path)).toContain(streamFunctionPath);
      for (const fn of secretFns) {
        const env = fn.props.Environment.Variables;
        expect([fn.path, env.INSTANCE_SECRET_IN_TABLE]).toEqual([fn.path, '1']);
        const config = JSON.parse(env.INSTANCE_CONFIG);
        expect(config.security).toEqual({ instanceSecretEnabled: true, readEndpointsRequireInstanceSecret: true });
        expect(config.hooks).toEqual([{ url: 'https://hooks.example.com/x', events: ['message.created'] }]);
      }
      expect(nagFindings(synth.stack)).toEqual([]);
    } finally {
      synth.dispose();
    }
  });

  it('turns on with OPENGRAM_INSTANCE_SECRET at synth, without deploying its value', () => {
    const synth = synthesize({ overrides: { OPENGRAM_INSTANCE_SECRET: 'env-s3cr3t-value-abc' } });
    try {
      expect(synth.assemblyText()).not.toContain('env-s3cr3t-value-abc');
      const [, resource] = resourcesOfType(synth.json, 'Custom::StoredSecrets')[0]!;
      expect(resource.Properties?.Secrets).toEqual(['INSTANCE', 'ORIGIN_VERIFY']);
      for (const fn of functionsOf(synth.json))
        expect(fn.props.Environment.Variables.INSTANCE_SECRET_IN_TABLE).toBe('1');
    } finally {
      synth.dispose();
    }
  });

  it('refuses a configuration that cannot work without a secret it may not deploy (push with its VAPID key)', () => {
    const config = {
      push: {
        enabled: true,
        vapidPublicKey: 'p',
        vapidPrivateKey: sentinels.vapidPrivateKey,
        subject: 'mailto:a@example.com',
      },
    };
    expect(() => synthesize({ config })).toThrow(DeploymentConfigError);
    expect(() => synthesize({ config })).toThrow(/names a VAPID key pair.*SECRET#VAPID item/);
  });
});

describe('configuration size', () => {
  it("fails the synth when the configuration cannot fit in the functions' 4 KB environment", () => {
    const agents = Array.from({ length: 40 }, (_, i) => ({
      id: `agent-${i}`,
      name: `Agent ${i}`,
      description: 'x'.repeat(60),
    }));
    expect(() => synthesize({ config: { agents } })).toThrow(/leaves room for \d+ bytes/);
  });

  /**
   * Upper bounds of what CloudFormation resolves each reference in an environment to, in any
   * region and partition (stack ChatRelay; generated names are at most 80 characters).
   */
  const resolvedMax: Record<string, number> = {
    // ChatRelay-StorageTable<hash>-<suffix>
    'AWS::DynamoDB::Table': 64,
    // arn:aws-us-gov:states:us-gov-west-1:<account>:stateMachine:<name>
    'AWS::StepFunctions::StateMachine': 63 + 80,
    // https://sqs.<region>.amazonaws.com(.cn)/<account>/<name>
    'AWS::SQS::Queue': 12 + 14 + 18 + 13 + 80,
    // a bucket name: at most 63 characters
    'AWS::S3::Bucket': 63,
  };

  /** The largest configuration the stack accepts: one agent's description fills the budget. */
  function largestConfig(extra = 0, secret = true) {
    const raw = (padding: number) => ({ agents: [{ id: 'agent', name: 'Agent', description: 'x'.repeat(padding) }] });
    const measure = (padding: number) =>
      Buffer.byteLength(
        JSON.stringify(JSON.stringify(deployableConfig(closedConfig(resolveConfig(raw(padding))), secret))),
      );
    return raw(INSTANCE_CONFIG_MAX_BYTES - measure(0) + extra);
  }

  it(
    "keeps every function's environment within Lambda's 4 KB (as Lambda measures it) with the largest " +
      'configuration',
    () => {
      expect(() => synthesize({ config: largestConfig(1) })).toThrow(/leaves room for \d+ bytes/);
      for (const variant of [{}, { overrides: { OPENGRAM_INSTANCE_SECRET: 'generated' } }]) {
        const synth = synthesize({ config: largestConfig(), ...variant });
        try {
          const resolve = (value: unknown): string => {
            if (typeof value === 'string') return value;
            const type = synth.json.Resources[refId(value) ?? '']?.Type ?? '';
            const max = resolvedMax[type];
            if (max === undefined || !('Ref' in (value as object)))
              throw new Error(`no bound for ${JSON.stringify(value)}`);
            return 'x'.repeat(max);
          };
          const sizes = functionsOf(synth.json).map((fn) => {
            const env = Object.fromEntries(
              Object.entries(fn.props.Environment.Variables as Record<string, unknown>).map(([k, v]) => [
                k,
                resolve(v),
              ]),
            );
            return { path: fn.path, bytes: Buffer.byteLength(JSON.stringify(env)) };
          });
          expect(sizes).toHaveLength(apiRoutes.length + extraFunctions);
          // The fullest function: the flush consumer (the state machine ARN for its stream checks, both
          // queue URLs and the stored secrets' names).
          const fullest = sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a));
          expect(fullest.path).toBe(flushFunctionPath);
          expect(fullest.bytes).toBeLessThanOrEqual(4096);
        } finally {
          synth.dispose();
        }
      }
    },
  );
});

describe('logging', () => {
  it('every function logs JSON at WARN with 1% of invocations sampled in full, platform lines at WARN', () => {
    for (const fn of fns) {
      const env = fn.props.Environment.Variables as Record<string, unknown>;
      expect([fn.path, env.LOG_LEVEL, env.POWERTOOLS_LOGGER_SAMPLE_RATE, fn.props.LoggingConfig]).toEqual([
        fn.path,
        'WARN',
        '0.01',
        expect.objectContaining({ LogFormat: 'JSON', SystemLogLevel: 'WARN' }),
      ]);
    }
  });

  it('takes the level and the sample rate from the stack props, and refuses bad ones', () => {
    expect(loggingEnvironment('info', '0.25')).toEqual({
      LOG_LEVEL: 'INFO',
      POWERTOOLS_LOGGER_SAMPLE_RATE: '0.25',
    });
    expect(loggingEnvironment(undefined, 0)).toEqual({
      LOG_LEVEL: 'WARN',
      POWERTOOLS_LOGGER_SAMPLE_RATE: '0',
    });
    expect(() => loggingEnvironment('LOUD', undefined)).toThrow(DeploymentConfigError);
    expect(() => loggingEnvironment('WARN', '1.5')).toThrow(/logSampleRate must be a number from 0 to 1/);
    expect(() => loggingEnvironment('WARN', 'often')).toThrow(DeploymentConfigError);
  });
});

describe('closed and capped by default (issue 17 finding 8)', () => {
  const storedSecretsId = () => resourcesOfType(main.json, 'Custom::StoredSecrets')[0]?.[0] ?? '(none)';
  /** The functions told to read a stored secret (their IAM reach matches: "each function reaches exactly..."). */
  const readersOf = (json: CfnTemplate, name: string) =>
    functionsOf(json)
      .filter((fn) =>
        String((fn.props.Environment?.Variables as Record<string, unknown>)?.STORED_SECRETS ?? '')
          .split(',')
          .includes(name),
      )
      .map((fn) => fn.path)
      .sort();

  it('throttles the API stage: 50 requests a second, bursts of 100', () => {
    const stage = resourcesOfType(main.json, 'AWS::ApiGatewayV2::Stage')[0]![1].Properties!;
    expect(stage.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
  });

  it('protects the table from deletion (and retains it with the stack)', () => {
    const [, table] = resourcesOfType(main.json, 'AWS::DynamoDB::Table')[0]!;
    expect(table.Properties?.DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
  });

  it('has CloudFront add the generated origin-verify value to both API origins, from the custom resource', () => {
    const [, resource] = resourcesOfType(main.json, 'Custom::StoredSecrets')[0]!;
    expect(resource.Properties?.Secrets).toEqual(['INSTANCE', 'ORIGIN_VERIFY']);
    // Kept with the table when the stack goes (the maker deletes nothing either).
    expect(resourcesOfType(main.json, 'AWS::SecretsManager::Secret')).toEqual([]);
    const config = resourcesOfType(main.json, 'AWS::CloudFront::Distribution')[0]![1].Properties!.DistributionConfig;
    expect(config.Origins).toHaveLength(4);
    // The web app's bucket and the media bucket's upload path get no header: they are no API, and
    // the value is not S3's business (it would keep it in its logs).
    const apiOrigins = (config.Origins as any[]).filter((origin) => !origin.S3OriginConfig);
    expect(apiOrigins).toHaveLength(2);
    for (const origin of config.Origins as any[]) {
      if (origin.S3OriginConfig) {
        expect(origin.OriginCustomHeaders).toBeUndefined();
        continue;
      }
      expect(origin.OriginCustomHeaders).toHaveLength(1);
      const [header] = origin.OriginCustomHeaders;
      expect(header.HeaderName).toBe('X-Origin-Verify');
      expect(header.HeaderValue).toEqual({ 'Fn::GetAtt': [storedSecretsId(), 'OriginVerify'] });
    }
  });

  it('lets the stream function and the write routes (rate limit) read the origin-verify value, no other', () => {
    const expected = [
      streamFunctionPath,
      ...apiRoutes.filter((r) => r.writes).map((r) => functionPathOf(routeId(r))),
    ].sort();
    expect(readersOf(main.json, 'ORIGIN_VERIFY')).toEqual(expected);
  });

  it('gives the instance secret to the functions that check auth (non-public routes, the stream) and the sign-in, no other', () => {
    const expected = [
      streamFunctionPath,
      ...apiRoutes
        .filter((r) => authClassOf(r) !== 'public' || (r as RouteSpec).signsSessions)
        .map((r) => functionPathOf(routeId(r))),
    ].sort();
    expect(readersOf(main.json, 'INSTANCE')).toEqual(expected);
    expect(expected).not.toContain(functionPathOf('Fallback'));
    expect(expected).not.toContain(effectsPath);
  });

  const alarmsOf = (json: CfnTemplate) =>
    new Map(
      resourcesOfType(json, 'AWS::CloudWatch::Alarm').map(([, a]) => [
        cdkPath(a)
          .replace(/^ChatRelay\//, '')
          .replace(/\/Resource$/, ''),
        a.Properties ?? {},
      ]),
    );

  it('bills the alarm metrics the cost model prices (CloudWatch bills each metric an alarm reads)', () => {
    const metrics = [...alarmsOf(main.json).values()].map((a) =>
      a.MetricName ? 1 : ((a.Metrics ?? []) as { MetricStat?: unknown }[]).filter((m) => m.MetricStat).length,
    );
    expect(metrics.reduce((sum, n) => sum + n, 0)).toBe(FIXED.alarms);
  });

  it('alarms on API 5xx, Lambda errors and throttles, stream concurrency, table throttles, state machine fails', () => {
    const alarms = alarmsOf(main.json);
    expect([...alarms.keys()].sort()).toEqual([
      'Alarms/Api5xx',
      'Alarms/LambdaErrors',
      'Alarms/LambdaThrottles',
      'Alarms/StateMachineFailures',
      'Alarms/StreamConcurrency',
      'Alarms/TableThrottles',
      'Dispatch/BatchDeadLettersAlarm',
      'Dispatch/FlushDeadLettersAlarm',
      'StreamDeadLetters/Alarm',
    ]);
    const anyIn5Minutes = {
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    };
    const httpApiId = resourcesOfType(main.json, 'AWS::ApiGatewayV2::Api')[0]![0];
    expect(alarms.get('Alarms/Api5xx')).toMatchObject({
      ...anyIn5Minutes,
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Statistic: 'Sum',
      Period: 300,
      Dimensions: [{ Name: 'ApiId', Value: { Ref: httpApiId } }],
    });
    for (const [name, metric] of [
      ['Alarms/LambdaErrors', 'Errors'],
      ['Alarms/LambdaThrottles', 'Throttles'],
    ] as const) {
      expect(alarms.get(name)).toMatchObject({
        ...anyIn5Minutes,
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Period: 300,
      });
      expect(alarms.get(name)!.Dimensions).toBeUndefined();
    }
    const streamId = fns.find((f) => f.path === streamFunctionPath)!.id;
    expect(alarms.get('Alarms/StreamConcurrency')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'ConcurrentExecutions',
      Statistic: 'Maximum',
      Period: 60,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: streamId } }],
      Threshold: 20, // 80% of the 25 reserved
      EvaluationPeriods: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const mathOf = (name: string) =>
      (alarms.get(name)!.Metrics as any[]).map((m) =>
        m.Expression
          ? `= ${m.Expression}`
          : `${m.Id} ${m.MetricStat.Metric.Namespace}/${m.MetricStat.Metric.MetricName}`,
      );
    expect(alarms.get('Alarms/TableThrottles')).toMatchObject(anyIn5Minutes);
    expect(mathOf('Alarms/TableThrottles').sort()).toEqual([
      '= reads + writes',
      'reads AWS/DynamoDB/ReadThrottleEvents',
      'writes AWS/DynamoDB/WriteThrottleEvents',
    ]);
    expect(alarms.get('Alarms/StateMachineFailures')).toMatchObject(anyIn5Minutes);
    expect(mathOf('Alarms/StateMachineFailures').sort()).toEqual([
      '= failed + timedOut',
      'failed AWS/States/ExecutionsFailed',
      'timedOut AWS/States/ExecutionsTimedOut',
    ]);
    // No topic given: no actions anywhere, and no topic.
    for (const [name, alarm] of alarms) expect([name, alarm.AlarmActions]).toEqual([name, undefined]);
    expect(resourcesOfType(main.json, 'AWS::SNS::Topic')).toEqual([]);
    expect(main.json.Outputs?.AlarmTopicArn).toBeUndefined();
  });

  it('notifies a topic made for -c alarmEmail from every alarm, dead-letter alarms included', () => {
    const synth = synthesize({ deployment: { alarmEmail: 'ops@example.com' } });
    try {
      const [topicId] = resourcesOfType(synth.json, 'AWS::SNS::Topic')[0]!;
      synth.template.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: 'email',
        Endpoint: 'ops@example.com',
        TopicArn: { Ref: topicId },
      });
      // enforceSSL: the topic policy refuses publishing without TLS.
      expect(JSON.stringify(resourcesOfType(synth.json, 'AWS::SNS::TopicPolicy')[0]![1])).toContain(
        'aws:SecureTransport',
      );
      const alarms = alarmsOf(synth.json);
      expect(alarms.size).toBe(9);
      for (const [name, alarm] of alarms) expect([name, alarm.AlarmActions]).toEqual([name, [{ Ref: topicId }]]);
      expect(synth.json.Outputs?.AlarmTopicArn?.Value).toEqual({ Ref: topicId });
      expect(nagFindings(synth.stack)).toEqual([]);
    } finally {
      synth.dispose();
    }
  });

  it('has no alarm with -c withoutAlarms=true (warned at synth), and refuses a topic to notify then', () => {
    const synth = synthesize({ deployment: { withoutAlarms: true } });
    try {
      expect(alarmsOf(synth.json).size).toBe(0);
      expect(synth.stack.alarms).toBeUndefined();
      const warnings = Annotations.fromStack(synth.stack).findWarning('*', Match.stringLikeRegexp('withoutAlarms'));
      expect(warnings).toHaveLength(1);
      // Everything else stays: the dead-letter queues the alarms watched, and a clean cdk-nag run.
      expect(resourcesOfType(synth.json, 'AWS::SQS::Queue').length).toBe(
        resourcesOfType(main.json, 'AWS::SQS::Queue').length,
      );
      expect(nagFindings(synth.stack)).toEqual([]);
    } finally {
      synth.dispose();
    }
    expect(Annotations.fromStack(main.stack).findWarning('*', Match.stringLikeRegexp('withoutAlarms'))).toEqual([]);
    for (const deployment of [
      { withoutAlarms: true, alarmEmail: 'ops@example.com' },
      { withoutAlarms: true, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:relay-alarms' },
    ]) {
      expect(() => synthesize({ deployment })).toThrow(DeploymentConfigError);
    }
  });

  it('notifies an existing topic given by -c alarmTopicArn, and refuses bad or conflicting topic options', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:relay-alarms';
    const synth = synthesize({ deployment: { alarmTopicArn: arn } });
    try {
      expect(resourcesOfType(synth.json, 'AWS::SNS::Topic')).toEqual([]);
      for (const [name, alarm] of alarmsOf(synth.json)) expect([name, alarm.AlarmActions]).toEqual([name, [arn]]);
    } finally {
      synth.dispose();
    }
    for (const deployment of [
      { alarmTopicArn: 'relay-alarms' },
      { alarmEmail: 'not-an-address' },
      { alarmTopicArn: arn, alarmEmail: 'ops@example.com' },
    ]) {
      expect(() => synthesize({ deployment })).toThrow(DeploymentConfigError);
    }
  });

  it('takes the stage throttle from the props, and refuses a rate or burst that is no whole number', () => {
    expect(apiThrottle(undefined, undefined)).toEqual({ rateLimit: 50, burstLimit: 100 });
    expect(apiThrottle('200', undefined)).toEqual({ rateLimit: 200, burstLimit: 200 });
    expect(apiThrottle(5, '10')).toEqual({ rateLimit: 5, burstLimit: 10 });
    for (const [rate, burst] of [
      ['0', undefined],
      ['1.5', undefined],
      ['many', undefined],
      [undefined, '-1'],
      ['20', '10'],
    ] as const) {
      expect(() => apiThrottle(rate, burst)).toThrow(DeploymentConfigError);
    }
    const synth = synthesize({ deployment: { apiThrottleRate: '7', apiThrottleBurst: '9' } });
    try {
      const stage = resourcesOfType(synth.json, 'AWS::ApiGatewayV2::Stage')[0]![1].Properties!;
      expect(stage.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 7, ThrottlingBurstLimit: 9 });
    } finally {
      synth.dispose();
    }
  });

  it('deploys no instance secret only with allowOpenAccess, and warns at synth what is open', () => {
    const warnings = (synth: Synthesized) =>
      Annotations.fromStack(synth.stack).findWarning('*', Match.stringLikeRegexp('allowOpenAccess'));
    expect(warnings(main)).toEqual([]);
    const open = synthesize({ deployment: { allowOpenAccess: true } });
    try {
      expect(storedSecretNamesOf(open.json)).toEqual(['ORIGIN_VERIFY']);
      expect(open.json.Outputs?.InstanceSecretCommand).toBeUndefined();
      for (const fn of functionsOf(open.json)) {
        const env = fn.props.Environment.Variables as Record<string, unknown>;
        expect([fn.path, env.INSTANCE_SECRET_IN_TABLE]).toEqual([fn.path, undefined]);
        expect([fn.path, String(env.STORED_SECRETS ?? '')]).toEqual([fn.path, expect.not.stringContaining('INSTANCE')]);
        expect(JSON.parse(env.INSTANCE_CONFIG as string).security).toEqual({
          instanceSecretEnabled: false,
          readEndpointsRequireInstanceSecret: false,
        });
      }
      expect(warnings(open).map((w) => w.entry.data)).toEqual([expect.stringContaining('no instance secret')]);
    } finally {
      open.dispose();
    }
    // Open access with the configuration's own secret: reads stay public as configured, and it says so.
    const readsOpen = synthesize({
      config: { security: { instanceSecretEnabled: true, instanceSecret: 'x'.repeat(32) } },
      deployment: { allowOpenAccess: true },
    });
    try {
      expect(storedSecretNamesOf(readsOpen.json)).toEqual(['INSTANCE', 'ORIGIN_VERIFY']);
      const env = functionsOf(readsOpen.json)[0]!.props.Environment.Variables;
      expect(JSON.parse(env.INSTANCE_CONFIG).security).toEqual({
        instanceSecretEnabled: true,
        readEndpointsRequireInstanceSecret: false,
      });
      expect(warnings(readsOpen).map((w) => w.entry.data)).toEqual([expect.stringContaining('every read route')]);
    } finally {
      readsOpen.dispose();
    }
  });
});

describe('bin/app.ts', () => {
  /**
   * Runs bin/app.ts as `cdk synth` would, with extra environment built from a scratch folder. The
   * web build is the fixture's (`-c webDir`) unless a test's context names one: otherwise a fresh
   * clone (no web/dist) or a source newer than the build would make the synth run Vite, whose output
   * on stderr is not what these tests read.
   */
  function runApp(env: (dir: string) => Record<string, string>, inspect?: (outdir: string) => void) {
    const dir = mkdtempSync(join(tmpdir(), 'chat-relay-app-'));
    try {
      const extra = env(dir);
      const context = {
        webDir: FIXTURE_WEB_DIR,
        ...NO_STACK_TRACES,
        ...JSON.parse(extra.CDK_CONTEXT_JSON ?? '{}'),
      };
      const run = spawnSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), 'bin/app.ts'], {
        cwd: root,
        env: {
          ...process.env,
          // The CDK's CloudFormation validation is checked on the main synth (above) and by `cdk
          // synth` itself; here it would only start its engine again in each run.
          CDK_VALIDATION: 'false',
          CDK_OUTDIR: join(dir, 'out'),
          ...extra,
          CDK_CONTEXT_JSON: JSON.stringify(context),
        },
        encoding: 'utf8',
        timeout: 120_000,
      });
      inspect?.(join(dir, 'out'));
      return run;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('fails the synth with the validation message of a bad configuration', () => {
    const run = runApp((dir) => {
      const configPath = join(dir, 'config.json');
      writeFileSync(configPath, JSON.stringify({ models: [] }));
      return { CONFIG_PATH: configPath };
    });
    expect(run.stderr.trim()).toBe('Config validation error: at least one model is required.');
    expect(run.status).toBe(1);
  });

  it('refuses the removed Secrets Manager options, pointing at the table items', () => {
    for (const option of ['instanceSecretArn', 'vapidKeysSecretArn']) {
      const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:chat-relay-AbC123';
      const run = runApp(() => ({ CDK_CONTEXT_JSON: JSON.stringify({ [option]: arn }) }));
      expect([option, run.status]).toEqual([option, 1]);
      expect(run.stderr.trim()).toBe(
        `-c ${option} is gone: the stack keeps its secrets in its table. Put your own value in the SECRET# item ` +
          'after deploying (docs/deployment.md, "Secrets in the table").',
      );
    }
  });

  it('fails the synth when allowOpenAccess is neither true nor false', () => {
    const run = runApp(() => ({ CDK_CONTEXT_JSON: JSON.stringify({ allowOpenAccess: 'yes please' }) }));
    expect(run.stderr.trim()).toBe('Context "allowOpenAccess" must be true or false.');
    expect(run.status).toBe(1);
  });

  it('adds the CI deploy-role stack when a repository is named, and fails on a bad one', () => {
    const context = (repository: string) => ({
      // The fixture build: no Vite run into the worktree's web/dist from a test.
      CDK_CONTEXT_JSON: JSON.stringify({
        githubRepository: repository,
        webDir: FIXTURE_WEB_DIR,
        'aws:cdk:bundling-stacks': [],
      }),
    });
    const bad = runApp(() => context('not a repository'));
    expect(bad.stderr.trim()).toBe('githubRepository must be owner/name, got "not a repository".');
    expect(bad.status).toBe(1);
    let stacks: string[] = [];
    let trust: unknown;
    const good = runApp(
      () => context('acme/chat-relay'),
      (outdir) => {
        stacks = readdirSync(outdir).filter((f) => f.endsWith('.template.json'));
        const template = JSON.parse(readFileSync(join(outdir, 'ChatRelayDeployRole.template.json'), 'utf8'));
        trust = (Object.values(template.Resources) as { Type: string; Properties: any }[])
          .filter((r) => r.Type === 'AWS::IAM::Role')
          .map((r) => r.Properties.AssumeRolePolicyDocument.Statement[0].Condition.StringEquals)
          .map((c: Record<string, string>) => c['token.actions.githubusercontent.com:sub'])
          .sort();
      },
    );
    expect(good.status).toBe(0);
    // Besides the two stacks, the app stack's nested ones (one per area of the API: templates.test.ts).
    const nested = stacks.filter((f) => f.endsWith('.nested.template.json'));
    expect(nested.every((f) => f.startsWith('ChatRelayApi'))).toBe(true);
    expect(nested).toHaveLength(API_AREAS.length);
    expect(stacks.filter((f) => !nested.includes(f)).sort()).toEqual([
      'ChatRelay.template.json',
      'ChatRelayDeployRole.template.json',
    ]);
    expect(trust).toEqual(['repo:acme/chat-relay:pull_request', 'repo:acme/chat-relay:ref:refs/heads/main']);
  }, 180_000);

  it('fails the synth when -c webDir names a folder without index.html, saying so', () => {
    const run = runApp((dir) => ({ CDK_CONTEXT_JSON: JSON.stringify({ webDir: dir }) }));
    expect(run.stderr.trim()).toMatch(/^-c webDir=.+ has no index\.html\. Name the folder of a built static app/);
    expect(run.status).toBe(1);
  });

  it('fails the synth when a custom domain comes without its certificate', () => {
    const run = runApp(() => ({ CDK_CONTEXT_JSON: JSON.stringify({ domainName: 'relay.example.com' }) }));
    expect(run.stderr.trim()).toBe(
      'Give both -c domainName and -c certificateArn (an ACM certificate in us-east-1), or neither.',
    );
    expect(run.status).toBe(1);
  });
});
