/**
 * Builds the app the way bin/app.ts does (validated config → ChatRelay stack) and
 * synthesizes it into a temporary cloud assembly. The cdk-nag plugin is not registered here,
 * so a finding fails its own test (stack.test.ts runs the pack on the stack) instead of
 * every test through a failed synth; `npm run synth` runs bin/app.ts with the plugin. Bundling all functions is the
 * cost of a synth, so it is optional: tests that only look at configuration skip it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import type { AppProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { resolveConfig } from '../../functions/platform/instance-config.js';
import type { ConfigOverrides } from '../../functions/platform/instance-config.js';
import { areaStackId } from '../../lib/constructs/api-area.js';
import { apiAreaOf, apiRoutes, routeId } from '../../lib/routes.js';
import { ChatRelayStack } from '../../lib/stack.js';
import { DEPLOY_TIME_VAPID_KEY } from '../../lib/deployment-inputs.js';
import type { ChatRelayStackProps } from '../../lib/stack.js';

export interface SynthOptions {
  /** The raw instance configuration document (as in a config file). */
  config?: unknown;
  overrides?: ConfigOverrides;
  /** Run esbuild for every function (slow); otherwise assets are placeholders. */
  bundle?: boolean;
  /**
   * Run the CDK's built-in CloudFormation validation (its schema and rule engine) as `cdk synth`
   * does, with cdk.json's flag that makes a violation fail the synth. Off by default: it costs about a
   * second or more of CPU per synth (the engine's WebAssembly start) and checks the same templates
   * each time; the main synth of stack.test.ts runs it.
   */
  validate?: boolean;
  /** A custom domain for the distribution. */
  domain?: { name: string; certificateArn: string };
  /**
   * The static web build the stack deploys (bin/app.ts: `-c webDir`, else web/dist built when
   * stale). @default FIXTURE_WEB_DIR, a small build of ours, so no synth here runs Vite.
   */
  webDir?: string;
  /** The deployment options bin/app.ts takes from context (allowOpenAccess, throttle, alarm topic). */
  deployment?: Pick<
    ChatRelayStackProps,
    | 'allowOpenAccess'
    | 'foreignBuild'
    | 'apiThrottleRate'
    | 'apiThrottleBurst'
    | 'alarmTopicArn'
    | 'alarmEmail'
    | 'withoutAlarms'
  >;
}

/**
 * A web build of ours in miniature: index.html, one content-hashed asset under assets/, and the
 * sign-in page (relay-sign-in.*) our build copies from web/public.
 */
export const FIXTURE_WEB_DIR = fileURLToPath(new URL('./fixtures/web/', import.meta.url));

/** The context of cdk.json, which `cdk synth` gives the app (feature flags among it). */
export const CDK_JSON_CONTEXT: Record<string, unknown> = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../cdk.json', import.meta.url)), 'utf8'),
).context;

/**
 * What the CDK's built-in CloudFormation validation reported for a synth into `outdir` (its
 * validation-report.json, written by every synth that ran it): one line per violation and
 * construct, warnings included; [] when it found nothing.
 */
export function validationViolations(outdir: string): string[] {
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: {
      pluginName: string;
      violations: {
        ruleName: string;
        severity: string;
        description: string;
        violatingConstructs: { constructPath: string }[];
      }[];
    }[];
  };
  return report.pluginReports.flatMap((plugin) =>
    plugin.violations.flatMap((v) =>
      v.violatingConstructs.map(
        (c) => `${plugin.pluginName} ${v.severity} ${v.ruleName} at ${c.constructPath}: ${v.description}`,
      ),
    ),
  );
}

/** cdk.json's feature flag that makes a violation of the CDK's CloudFormation validation fail the synth. */
export const STRICT_VALIDATION = '@aws-cdk/core:validateAgainstDefaultRules';

/** cdk.json's context but its strict validation: the feature flags every synth of ours takes. */
export const CDK_JSON_FLAGS: Record<string, unknown> = Object.fromEntries(
  Object.entries(CDK_JSON_CONTEXT).filter(([key]) => key !== STRICT_VALIDATION),
);

/**
 * An App that validates as `cdk synth` does: the CDK's CloudFormation validation, a violation
 * failing the synth by cdk.json's flag, its report in `outdir` (validationViolations).
 */
export const validatingApp = (outdir: string): App =>
  quietApp({
    outdir,
    context: { [STRICT_VALIDATION]: CDK_JSON_CONTEXT[STRICT_VALIDATION] },
    builtinCloudFormationValidation: true,
  });

/**
 * The context that keeps the CDK from capturing a stack trace for every construct and resource
 * (metadata for `--debug` and validation reports): each is a source-mapped stack under jest, about
 * 4 s of CPU over the infra files. No test reads them.
 */
export const NO_STACK_TRACES = {
  'aws:cdk:disable-stack-trace': true,
  'aws:cdk:disable-creation-stack-traces': true,
} as const;

/** An App for a test's own small stack: no construct stack traces, no built-in validation (unless asked). */
export const quietApp = (props: AppProps = {}): App =>
  new App({
    stackTraces: false,
    builtinCloudFormationValidation: false,
    ...props,
    context: { ...NO_STACK_TRACES, ...props.context },
  });

export interface Synthesized {
  stack: ChatRelayStack;
  /** The stack as one template: the root's resources and every nested stack's (flattenNested). */
  template: Template;
  /** The same as plain JSON, for walking references between resources. */
  json: CfnTemplate;
  /** Each template of the stack as synthesized, the root's first (CloudFormation's limits are per template). */
  templates: TemplateFile[];
  /** The cloud assembly directory (removed by dispose). */
  outdir: string;
  /** Every text file of the cloud assembly except bundled code, concatenated. */
  assemblyText: () => string;
  dispose: () => void;
}

export interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
  DependsOn?: string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Metadata?: Record<string, any>;
}
export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
  Parameters?: Record<string, unknown>;
}

/** One template file of the cloud assembly: the root stack's, or a nested stack's. */
export interface TemplateFile {
  /** Its file name in the assembly (`ChatRelay.template.json`, `ChatRelayApiChats….nested.template.json`). */
  file: string;
  /** The construct path of its stack: `ChatRelay`, `ChatRelay/Api/Chats`. */
  path: string;
  /** The logical id of its AWS::CloudFormation::Stack resource in the parent; none for the root. */
  nestedAs?: string;
  json: CfnTemplate;
}

export function synthesize(options: SynthOptions = {}): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'chat-relay-infra-'));
  try {
    return synthesizeInto(outdir, options);
  } catch (error) {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  }
}

function synthesizeInto(outdir: string, options: SynthOptions): Synthesized {
  const app = quietApp({
    outdir,
    builtinCloudFormationValidation: options.validate ?? false,
    context: {
      // cdk.json's feature flags (minimized policies among them), as `cdk synth` gives them; its
      // strict validation only when validating.
      ...CDK_JSON_FLAGS,
      ...(options.validate ? { [STRICT_VALIDATION]: CDK_JSON_CONTEXT[STRICT_VALIDATION] } : {}),
      // As the CLI does: record each resource's construct path (tests map routes by it).
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:enable-asset-metadata': true,
      // The CDK's own switch: bundle every stack, or none (placeholder assets).
      'aws:cdk:bundling-stacks': options.bundle ? ['**'] : [],
    },
  });
  const stack = new ChatRelayStack(app, 'ChatRelay', {
    // As bin/app.ts: with push enabled and no key pair named, the deploy makes one.
    config: resolveConfig(options.config ?? {}, { VAPID_PUBLIC_KEY: DEPLOY_TIME_VAPID_KEY, ...options.overrides }),
    domain: options.domain,
    webDir: options.webDir ?? FIXTURE_WEB_DIR,
    ...options.deployment,
  });
  const assembly = app.synth();
  const root = assembly.getStackByName(stack.stackName);
  const { json, templates } = flattenNested(outdir, root.templateFile, stack.node.path);
  return {
    stack,
    template: Template.fromJSON(json),
    json,
    templates,
    outdir,
    assemblyText: () =>
      textFiles(outdir)
        .map((file) => readFileSync(file, 'utf8'))
        .join('\n'),
    dispose: () => rmSync(outdir, { recursive: true, force: true }),
  };
}

/**
 * The root template with every nested stack's resources brought into it, as CloudFormation
 * resolves them: in a nested template, a Ref to one of its parameters becomes the value its parent
 * passes (CDK's `referenceto…` parameters: the root's own Ref or Fn::GetAtt), and in a parent, a
 * Fn::GetAtt of a nested stack's `Outputs.X` becomes that output's value. The nested stacks'
 * AWS::CloudFormation::Stack resources are left out (plumbing, not part of what the stack does), so
 * a test reads the flattened stack as it read the single template before the areas were nested.
 * Throws when two templates use the same logical id (a reference would be ambiguous).
 */
export function flattenNested(
  outdir: string,
  rootFile: string,
  rootPath: string,
): { json: CfnTemplate; templates: TemplateFile[] } {
  const resources: Record<string, CfnResource> = {};
  const templates: TemplateFile[] = [];
  const read = (file: string) => JSON.parse(readFileSync(join(outdir, file), 'utf8')) as CfnTemplate;

  const flatten = (template: CfnTemplate, params: Record<string, unknown>): CfnTemplate['Outputs'] => {
    const nested = new Map<string, CfnTemplate['Outputs']>();
    const nestedFile = (resource: CfnResource) =>
      resource.Type === 'AWS::CloudFormation::Stack' ? (resource.Metadata?.['aws:asset:path'] as string) : undefined;
    const outputsOf = (id: string): CfnTemplate['Outputs'] => {
      if (!nested.has(id)) {
        const resource = template.Resources[id]!;
        const file = nestedFile(resource)!;
        const child = read(file);
        templates.push({ file, path: cdkPath(resource).replace(/\.NestedStack\/.*$/, ''), nestedAs: id, json: child });
        nested.set(id, undefined);
        nested.set(id, flatten(child, rewrite(resource.Properties?.Parameters ?? {}) as Record<string, unknown>));
      }
      return nested.get(id);
    };
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (typeof value !== 'object' || value === null) return value;
      const v = value as Record<string, unknown>;
      if (typeof v.Ref === 'string' && Object.keys(v).length === 1 && v.Ref in params) return params[v.Ref];
      const getAtt = v['Fn::GetAtt'];
      if (Array.isArray(getAtt) && typeof getAtt[1] === 'string' && getAtt[1].startsWith('Outputs.')) {
        const target = template.Resources[String(getAtt[0])];
        if (target && nestedFile(target)) {
          const output = outputsOf(String(getAtt[0]))?.[getAtt[1].slice('Outputs.'.length)];
          if (!output) throw new Error(`No output ${getAtt[1]} in nested stack ${String(getAtt[0])}`);
          return output.Value;
        }
      }
      return Object.fromEntries(Object.entries(v).map(([key, inner]) => [key, rewrite(inner)]));
    };
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (nestedFile(resource)) {
        outputsOf(id);
        continue;
      }
      if (id in resources) throw new Error(`Logical id ${id} is in two templates of the stack`);
      resources[id] = rewrite(resource) as CfnResource;
    }
    return rewrite(template.Outputs ?? {}) as CfnTemplate['Outputs'];
  };

  const root = read(rootFile);
  templates.push({ file: rootFile, path: rootPath, json: root });
  const outputs = flatten(root, {});
  return { json: { ...root, Resources: resources, Outputs: outputs }, templates };
}

function textFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return textFiles(path);
    return /\.(json|txt)$/.test(name) ? [path] : [];
  });
}

/**
 * Where the deploy-time functions live (they serve no request): the stored secrets' maker and the
 * CDK Provider framework's function, and the web app deployment's copier (CDK's BucketDeployment
 * singleton, at the stack's top).
 */
export const DEPLOY_TIME_PREFIXES = ['ChatRelay/Secrets/', 'ChatRelay/Custom::CDKBucketDeployment'];
export const isDeployTimePath = (path: string): boolean => DEPLOY_TIME_PREFIXES.some((p) => path.startsWith(p));

/**
 * The construct path of a route's function by its id (lib/routes.ts routeId): in its area's nested
 * stack (`ChatRelay/Api/Chats/GetApiV1Chats/Resource`, lib/constructs/api-area.ts); any other id
 * (the fallback) directly under the API, in the root stack.
 */
export function routeFunctionPath(id: string): string {
  const route = apiRoutes.find((r) => routeId(r) === id);
  return route ? `ChatRelay/Api/${areaStackId(apiAreaOf(route))}/${id}/Resource` : `ChatRelay/Api/${id}/Resource`;
}

/** Resources of one type, by logical id. */
export function resourcesOfType(json: CfnTemplate, type: string): [string, CfnResource][] {
  return Object.entries(json.Resources).filter(([, resource]) => resource.Type === type);
}

/** The construct path CDK records for a resource, e.g. "ChatRelay/Api/Fallback/Resource". */
export function cdkPath(resource: CfnResource): string {
  return String(resource.Metadata?.['aws:cdk:path'] ?? '');
}

/** The logical id behind {Ref: id} or {"Fn::GetAtt": [id, attr]}. */
export function refId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string') return v.Ref;
  const getAtt = v['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  return undefined;
}

export interface PolicyStatementJson {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** Every statement of every inline policy attached to a role. */
export function statementsOfRole(json: CfnTemplate, roleId: string): PolicyStatementJson[] {
  return resourcesOfType(json, 'AWS::IAM::Policy')
    .filter(([, policy]) => (policy.Properties?.Roles as unknown[]).some((role) => refId(role) === roleId))
    .flatMap(([, policy]) => policy.Properties?.PolicyDocument.Statement as PolicyStatementJson[])
    .map(withResourcesInOrder);
}

/**
 * A statement with its Resource list in one order (by JSON): the minimized policies cdk.json asks
 * for sort it one way, a statement written by hand (a test's expectation) lists it another.
 */
function withResourcesInOrder(statement: PolicyStatementJson): PolicyStatementJson {
  if (!Array.isArray(statement.Resource)) return statement;
  const key = (value: unknown) => JSON.stringify(value);
  return {
    ...statement,
    Resource: [...statement.Resource].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
  };
}

export const actionsOf = (statement: PolicyStatementJson): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

export const resourcesOf = (statement: PolicyStatementJson): unknown[] =>
  Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];

/**
 * A string built with Fn::Join (a state machine definition, an ARN) with every reference as
 * a placeholder: `${LogicalId}` for Ref, `${LogicalId.Attr}` for Fn::GetAtt.
 */
export function joinedString(value: unknown): string {
  if (typeof value === 'string') return value;
  const id = refId(value);
  if (id !== undefined) {
    const getAtt = (value as Record<string, unknown>)['Fn::GetAtt'] as unknown[] | undefined;
    return getAtt ? `\${${id}.${String(getAtt[1])}}` : `\${${id}}`;
  }
  const join = (value as Record<string, unknown> | null)?.['Fn::Join'];
  if (Array.isArray(join)) return (join[1] as unknown[]).map(joinedString).join(join[0] as string);
  throw new Error(`Not a string, reference or Fn::Join: ${JSON.stringify(value)}`);
}
