/**
 * AWS's documented quotas that a deploy of the stack runs into, measured on the synthesized
 * template and its assets (nothing here reaches AWS). A deploy that would fail on a quota fails
 * this preflight instead (stack.test.ts "AWS quotas", on the one bundled synth of that file).
 *
 * Each quota names its source. Where the documents disagree (CloudFront's defaults were raised
 * for newer accounts), the lower figure is kept: an older account still has it.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CfnResource, CfnTemplate, Synthesized } from './synth.js';
import { cdkPath, resourcesOfType } from './synth.js';

/** CloudFormation: https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html */
const CFN = {
  /** Resources declared in one template. */
  resources: 500,
  outputs: 200,
  parameters: 200,
  /** Logical ids ("resource name") and output names. */
  nameChars: 255,
  /** A template body uploaded to S3 (cdk deploy uploads any template above 50 KiB to its bootstrap bucket). */
  templateS3Bytes: 1024 * 1024,
  /** A template body sent in the request itself: larger ones must go through S3, as cdk deploy does. */
  templateDirectBytes: 51_200,
};

/**
 * IAM: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html ("IAM and AWS
 * STS character limits"): a role's inline policies together, whitespace not counted; a managed
 * policy; a role name; an inline policy name.
 */
const IAM = { roleInlineChars: 10_240, managedPolicyChars: 6_144, roleNameChars: 64, policyNameChars: 128 };

/**
 * Lambda: https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html: the environment
 * variables of a function together (measured as their JSON object, lib/deployment-inputs.ts
 * INSTANCE_CONFIG_MAX_BYTES), the deployment package unzipped (250 MB, the API's CodeSizeUnzipped:
 * 262,144,000 bytes; a package uploaded through S3 has no zipped limit of its own), a function name.
 */
const LAMBDA = { environmentBytes: 4 * 1024, unzippedBytes: 262_144_000, functionNameChars: 64 };

/** HTTP APIs: https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html */
const HTTP_API = { routesPerApi: 300, integrationsPerApi: 300 };

/**
 * CloudFront: https://docs.aws.amazon.com/general/latest/gr/cf_region.html (service quotas: 25 cache
 * behaviors and 25 origins per distribution, 20 cache, origin request and response headers policies
 * per account, 100 CloudFront Functions per account; the Developer Guide's cloudfront-limits.html now
 * lists 75 behaviors and 100 origins,
 * for accounts with the newer defaults). The policies are counted per account: the stack's own count
 * is what it adds to the account's.
 */
const CLOUDFRONT = {
  behaviorsPerDistribution: 25,
  originsPerDistribution: 25,
  policiesPerAccountEachKind: 20,
  /** CloudFront Functions per account (same page). */
  functionsPerAccount: 100,
};

/**
 * Names set explicitly in the template (a name CloudFormation generates from the stack name and the
 * logical id is cut to fit by CloudFormation itself): S3 bucket names
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html), SQS queue names
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html),
 * log group names (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_CreateLogGroup.html),
 * state machine names (https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html),
 * and the Lambda and IAM names above.
 */
const NAME_LIMITS: Record<string, [property: string, max: number][]> = {
  'AWS::Lambda::Function': [['FunctionName', LAMBDA.functionNameChars]],
  'AWS::IAM::Role': [['RoleName', IAM.roleNameChars]],
  'AWS::IAM::Policy': [['PolicyName', IAM.policyNameChars]],
  'AWS::IAM::ManagedPolicy': [['ManagedPolicyName', IAM.policyNameChars]],
  'AWS::S3::Bucket': [['BucketName', 63]],
  'AWS::SQS::Queue': [['QueueName', 80]],
  'AWS::Logs::LogGroup': [['LogGroupName', 512]],
  'AWS::StepFunctions::StateMachine': [['StateMachineName', 80]],
};

export interface Margin {
  quota: string;
  /** The largest measured value (of a role, a function, a distribution…). */
  value: number;
  limit: number;
  /** Where the largest value was measured. */
  at: string;
}

// ---- What CloudFormation resolves a reference to, at most -------------------------------------

/**
 * The longest values of the pseudo parameters, in any partition and region (the longest Region codes
 * are 14 characters today, e.g. ap-southeast-5; 16 leaves room).
 */
const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws-us-gov',
  'AWS::Region': 'x'.repeat(16),
  'AWS::AccountId': '123456789012',
  'AWS::URLSuffix': 'amazonaws.com.cn',
};

/**
 * The longest name CloudFormation generates for a resource without one: the stack name, the logical
 * id and a 13-character random suffix (it shortens the logical id to fit the service's limit).
 */
const generatedName = (stackName: string, logicalId: string) => `${stackName}-${logicalId}-${'x'.repeat(13)}`;

const arn = (service: string, resource: string, regional = true) =>
  `arn:${PSEUDO['AWS::Partition']}:${service}:${regional ? PSEUDO['AWS::Region'] : ''}:${regional ? PSEUDO['AWS::AccountId'] : ''}:${resource}`;

/**
 * The stack's name, or for a flattened stack (synth.ts flattenNested) the name of the stack each
 * logical id is in (stackNamesOf): a nested stack's resources get names from the nested stack's own.
 */
export type StackNames = string | ((logicalId?: string) => string);

/**
 * The longest name of each template's stack: the root's, and a nested one's as CloudFormation makes
 * it, `<parent>-<logical id of its stack resource>-<13 characters>`.
 */
export function stackNamesOf(synth: Synthesized): (logicalId?: string) => string {
  const root = synth.stack.stackName;
  const byId = new Map<string, string>();
  const names = new Map<string, string>([[synth.templates[0]!.file, root]]);
  for (const template of synth.templates) {
    if (template.nestedAs) names.set(template.file, generatedName(root, template.nestedAs));
    for (const id of Object.keys(template.json.Resources)) byId.set(id, names.get(template.file) ?? root);
  }
  return (logicalId) => (logicalId === undefined ? root : (byId.get(logicalId) ?? root));
}

/** A Ref's or Fn::GetAtt's value at its longest, by the referenced resource's type. */
function referenceBound(json: CfnTemplate, stackNames: StackNames, id: string, attribute: string | undefined): string {
  const stackName = typeof stackNames === 'string' ? stackNames : stackNames(id);
  if (attribute === undefined && PSEUDO[id]) return PSEUDO[id];
  if (attribute === undefined && id === 'AWS::StackName') {
    return typeof stackNames === 'string' ? stackNames : stackNames();
  }
  const resource: CfnResource | undefined = json.Resources[id];
  if (!resource) throw new Error(`no bound for a reference to ${id}`);
  const name = generatedName(stackName, id);
  const key = `${resource.Type} ${attribute ?? 'Ref'}`;
  switch (key) {
    case 'AWS::DynamoDB::Table Ref':
      return name;
    case 'AWS::DynamoDB::Table Arn':
      return arn('dynamodb', `table/${name}`);
    case 'AWS::DynamoDB::Table StreamArn':
      return arn('dynamodb', `table/${name}/stream/2026-01-01T00:00:00.000`);
    case 'AWS::Logs::LogGroup Ref':
      return name;
    case 'AWS::Logs::LogGroup Arn':
      return arn('logs', `log-group:${name}:*`);
    case 'AWS::SQS::Queue Arn':
      return arn('sqs', name.slice(0, 80));
    case 'AWS::SQS::Queue Ref':
      return `https://sqs.${PSEUDO['AWS::Region']}.${PSEUDO['AWS::URLSuffix']}/${PSEUDO['AWS::AccountId']}/${name.slice(0, 80)}`;
    case 'AWS::SQS::Queue QueueName':
      return name.slice(0, 80);
    case 'AWS::S3::Bucket Ref':
      return name.slice(0, 63);
    case 'AWS::S3::Bucket Arn':
      return arn('s3', name.slice(0, 63), false);
    case 'AWS::Lambda::Function Arn':
      return arn('lambda', `function:${name.slice(0, LAMBDA.functionNameChars)}`);
    case 'AWS::StepFunctions::StateMachine Ref':
      return arn('states', `stateMachine:${name.slice(0, 80)}`);
    default:
      throw new Error(`no bound for ${key} (${id})`);
  }
}

/**
 * A template value with every reference replaced by the longest string CloudFormation may resolve
 * it to. Intrinsics without a bound here throw, so a new kind of reference is seen, not ignored.
 */
export function resolvedBound(json: CfnTemplate, stackName: StackNames, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => resolvedBound(json, stackName, v));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1) {
    const [key, arg] = entries[0]!;
    if (key === 'Ref') return referenceBound(json, stackName, arg as string, undefined);
    if (key === 'Fn::GetAtt') {
      const [id, attribute] = arg as [string, string];
      return referenceBound(json, stackName, id, attribute);
    }
    if (key === 'Fn::Sub' && typeof arg === 'string') {
      // ${Name} and ${Name.Attribute}, as Ref and Fn::GetAtt (the deployment's asset bucket name).
      return arg.replace(/\$\{([^}.]+)(?:\.([^}]+))?\}/g, (_, id: string, attribute: string | undefined) =>
        referenceBound(json, stackName, id, attribute),
      );
    }
    if (key === 'Fn::Join') {
      const [separator, parts] = arg as [string, unknown[]];
      return parts.map((part) => String(resolvedBound(json, stackName, part))).join(separator);
    }
    if (key.startsWith('Fn::')) throw new Error(`no bound for ${key}: ${JSON.stringify(arg)}`);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolvedBound(json, stackName, v)]));
}

// ---- Measurements --------------------------------------------------------------------------------

const largest = (quota: string, limit: number, rows: { value: number; at: string }[]): Margin => {
  const top = rows.reduce((a, b) => (b.value > a.value ? b : a), { value: 0, at: '(none)' });
  return { quota, value: top.value, limit, at: top.at };
};

const pathOf = (json: CfnTemplate, id: string) => cdkPath(json.Resources[id]!) || id;

/** Bytes under a folder, files of every subfolder included (an asset as Lambda unzips it). */
function folderBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => {
    const path = join(dir, name);
    const stat = statSync(path);
    return sum + (stat.isDirectory() ? folderBytes(path) : stat.size);
  }, 0);
}

/** Every quota above against the synthesized stack: its template, its assets, its names. */
export function quotaMargins(synth: Synthesized): Margin[] {
  const { json, outdir } = synth;
  // Names and bounds: each resource's own stack (a nested one's name is longer than the root's).
  const stackName = stackNamesOf(synth);
  const resources = Object.entries(json.Resources);

  const roleChars = new Map<string, number>();
  for (const [, policy] of resourcesOfType(json, 'AWS::IAM::Policy')) {
    const document = JSON.stringify(resolvedBound(json, stackName, policy.Properties?.PolicyDocument));
    for (const role of policy.Properties?.Roles as { Ref: string }[]) {
      roleChars.set(role.Ref, (roleChars.get(role.Ref) ?? 0) + document.length);
    }
  }
  for (const [id, role] of resourcesOfType(json, 'AWS::IAM::Role')) {
    for (const inline of (role.Properties?.Policies ?? []) as { PolicyDocument: unknown }[]) {
      const document = JSON.stringify(resolvedBound(json, stackName, inline.PolicyDocument));
      roleChars.set(id, (roleChars.get(id) ?? 0) + document.length);
    }
  }

  const functions = resourcesOfType(json, 'AWS::Lambda::Function');
  const distributions = resourcesOfType(json, 'AWS::CloudFront::Distribution').map(
    ([id, d]) => [id, d.Properties?.DistributionConfig as { CacheBehaviors?: unknown[]; Origins: unknown[] }] as const,
  );
  const perApi = (type: string) => {
    const counts = new Map<string, number>();
    for (const [, r] of resourcesOfType(json, type)) {
      const api = (r.Properties?.ApiId as { Ref: string }).Ref;
      counts.set(api, (counts.get(api) ?? 0) + 1);
    }
    return [...counts].map(([api, value]) => ({ value, at: pathOf(json, api) }));
  };
  const explicitNames = resources.flatMap(([id, r]) =>
    (NAME_LIMITS[r.Type] ?? []).flatMap(([property, max]) => {
      const name = r.Properties?.[property];
      if (name === undefined) return [];
      return [{ id, property, max, length: String(resolvedBound(json, stackName, name)).length }];
    }),
  );

  return [
    // CloudFormation's limits hold per template: the root's and each nested stack's (synth.ts templates).
    largest(
      'CloudFormation resources in a template',
      CFN.resources,
      synth.templates.map((t) => ({ value: Object.keys(t.json.Resources).length, at: t.path })),
    ),
    largest(
      'CloudFormation outputs of a template',
      CFN.outputs,
      synth.templates.map((t) => ({ value: Object.keys(t.json.Outputs ?? {}).length, at: t.path })),
    ),
    largest(
      'CloudFormation parameters of a template',
      CFN.parameters,
      synth.templates.map((t) => ({ value: Object.keys(t.json.Parameters ?? {}).length, at: t.path })),
    ),
    largest(
      'CloudFormation template bytes (uploaded to S3)',
      CFN.templateS3Bytes,
      synth.templates.map((t) => ({ value: statSync(join(outdir, t.file)).size, at: t.file })),
    ),
    largest(
      'CloudFormation logical id or output name characters',
      CFN.nameChars,
      synth.templates
        .flatMap((t) => [...Object.keys(t.json.Resources), ...Object.keys(t.json.Outputs ?? {})])
        .map((id) => ({ value: id.length, at: id })),
    ),
    largest(
      "IAM characters of a role's inline policies (no whitespace)",
      IAM.roleInlineChars,
      [...roleChars].map(([id, value]) => ({ value, at: pathOf(json, id) })),
    ),
    largest(
      'IAM characters of a managed policy (no whitespace)',
      IAM.managedPolicyChars,
      resourcesOfType(json, 'AWS::IAM::ManagedPolicy').map(([id, p]) => ({
        value: JSON.stringify(resolvedBound(json, stackName, p.Properties?.PolicyDocument)).length,
        at: pathOf(json, id),
      })),
    ),
    largest(
      "Lambda environment bytes of a function (its variables' JSON)",
      LAMBDA.environmentBytes,
      functions.map(([id, fn]) => ({
        value: Buffer.byteLength(
          JSON.stringify(resolvedBound(json, stackName, fn.Properties?.Environment?.Variables ?? {})),
        ),
        at: pathOf(json, id),
      })),
    ),
    largest(
      'Lambda unzipped bytes of a function asset',
      LAMBDA.unzippedBytes,
      functions.flatMap(([id, fn]) => {
        const asset = fn.Metadata?.['aws:asset:path'] as string | undefined;
        return asset ? [{ value: folderBytes(resolve(outdir, asset)), at: pathOf(json, id) }] : [];
      }),
    ),
    largest('HTTP API routes of an API', HTTP_API.routesPerApi, perApi('AWS::ApiGatewayV2::Route')),
    largest('HTTP API integrations of an API', HTTP_API.integrationsPerApi, perApi('AWS::ApiGatewayV2::Integration')),
    largest(
      'CloudFront cache behaviors of a distribution (default one apart)',
      CLOUDFRONT.behaviorsPerDistribution,
      distributions.map(([id, config]) => ({ value: config.CacheBehaviors?.length ?? 0, at: pathOf(json, id) })),
    ),
    largest(
      'CloudFront origins of a distribution',
      CLOUDFRONT.originsPerDistribution,
      distributions.map(([id, config]) => ({ value: config.Origins.length, at: pathOf(json, id) })),
    ),
    ...(
      [
        ['cache', 'AWS::CloudFront::CachePolicy'],
        ['origin request', 'AWS::CloudFront::OriginRequestPolicy'],
        ['response headers', 'AWS::CloudFront::ResponseHeadersPolicy'],
      ] as const
    ).map(([kind, type]) =>
      largest(`CloudFront ${kind} policies the stack adds to its account`, CLOUDFRONT.policiesPerAccountEachKind, [
        { value: resourcesOfType(json, type).length, at: stackName() },
      ]),
    ),
    largest('CloudFront Functions the stack adds to its account', CLOUDFRONT.functionsPerAccount, [
      { value: resourcesOfType(json, 'AWS::CloudFront::Function').length, at: stackName() },
    ]),
    // One row per kind of explicit name (a kind the template never sets measures 0 against its limit).
    ...Object.entries(NAME_LIMITS).flatMap(([type, limits]) =>
      limits.map(([property, max]) =>
        largest(
          `${type} ${property} characters (explicit names only)`,
          max,
          explicitNames
            .filter((n) => n.property === property && json.Resources[n.id]!.Type === type)
            .map((n) => ({ value: n.length, at: pathOf(json, n.id) })),
        ),
      ),
    ),
  ];
}

/** The margins as a Markdown table, for the test's output (and a deploy's notes). */
export function marginsTable(margins: Margin[]): string {
  const rows = margins.map(
    (m) =>
      `| ${m.quota} | ${m.value.toLocaleString('en-US')} | ${m.limit.toLocaleString('en-US')} | ` +
      `${((100 * m.value) / m.limit).toFixed(1)} % | ${m.at} |`,
  );
  return ['| Quota | Largest | Limit | Used | Where |', '|---|---:|---:|---:|---|', ...rows].join('\n');
}

/**
 * The stack's own ceiling on the resources of any one of its templates, below CloudFormation's 500:
 * a template nearing the limit fails here before a deploy does (issue 34). The API's functions are in
 * one nested stack per area (lib/constructs/api-area.ts); templates.test.ts checks the room left.
 */
export const TEMPLATE_RESOURCE_CEILING = 400;

/** The direct-upload limit, for the table's note: the template must go through S3 above it. */
export const TEMPLATE_DIRECT_BYTES = CFN.templateDirectBytes;
