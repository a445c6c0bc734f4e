/**
 * Reads a synthesized cloud assembly (cdk.out) as CloudFormation would deploy it: the stack's
 * template, its nested stacks' templates (`AWS::CloudFormation::Stack` resources whose
 * `aws:asset:path` names the nested template file), and every intrinsic function resolved to the
 * rehearsal's local stand-ins (intrinsics.ts does the resolving).
 *
 * Physical values (a table's name and stream ARN, a queue's URL, a custom resource's attributes)
 * are set by whoever provisions the resource (`setPhysical`); every other resource gets the name
 * and ARN CloudFormation's naming would give it (physical.ts), in the rehearsal's account and region.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveValue } from './intrinsics.js';
import type { ResolveContext } from './intrinsics.js';
import { defaultPhysical } from './physical.js';
import type { Physical } from './physical.js';
import { REHEARSAL_ACCOUNT, REHEARSAL_REGION } from './types.js';
import type { AssemblyResource, FunctionSpec, PolicyDocument } from './types.js';

interface Template {
  Parameters?: Record<string, { Default?: unknown; Type?: string }>;
  Conditions?: Record<string, unknown>;
  Mappings?: Record<string, Record<string, Record<string, unknown>>>;
  Resources: Record<string, RawResource>;
  Outputs?: Record<string, { Value: unknown }>;
}

interface RawResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  Condition?: string;
}

interface LoadedTemplate {
  /** '' for the root; nested: the parent's path and the nested stack's logical id joined by '/'. */
  path: string;
  /** Its file in the assembly folder. */
  file: string;
  template: Template;
  /** The stack's name as CloudFormation would make it (root: the artifact's stack name). */
  stackName: string;
  parent?: { path: string; logicalId: string };
}

/** Thrown for anything in the assembly the rehearsal cannot run (it names what and where). */
export class AssemblyError extends Error {}

export class Assembly {
  readonly dir: string;
  readonly stackName: string;
  readonly account = REHEARSAL_ACCOUNT;
  readonly region = REHEARSAL_REGION;
  private readonly templates = new Map<string, LoadedTemplate>();
  private readonly physical = new Map<string, Physical>();
  private readonly resolving = new Set<string>();

  constructor(dir: string, stackName = 'ChatRelay') {
    this.dir = dir;
    this.stackName = stackName;
    const manifestPath = join(dir, 'manifest.json');
    if (!existsSync(manifestPath)) throw new AssemblyError(`${dir} holds no cloud assembly (no manifest.json).`);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      artifacts?: Record<string, { type: string; properties?: { templateFile?: string; stackName?: string } }>;
    };
    const artifact = Object.entries(manifest.artifacts ?? {}).find(
      ([id, a]) => a.type === 'aws:cloudformation:stack' && (a.properties?.stackName ?? id) === stackName,
    );
    if (!artifact?.[1].properties?.templateFile)
      throw new AssemblyError(`The assembly in ${dir} has no stack named ${stackName}.`);
    this.load('', artifact[1].properties.templateFile, stackName);
  }

  private load(path: string, file: string, stackName: string, parent?: LoadedTemplate['parent']): void {
    const template = JSON.parse(readFileSync(join(this.dir, file), 'utf8')) as Template;
    this.templates.set(path, { path, file, template, stackName, ...(parent ? { parent } : {}) });
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== 'AWS::CloudFormation::Stack') continue;
      const nestedFile = resource.Metadata?.['aws:asset:path'];
      if (typeof nestedFile !== 'string')
        throw new AssemblyError(`Nested stack ${path}/${logicalId} names no template file (aws:asset:path).`);
      const nestedPath = path ? `${path}/${logicalId}` : logicalId;
      // CloudFormation names a nested stack <parent>-<logical id>-<random suffix>.
      this.load(nestedPath, nestedFile, `${stackName}-${logicalId}-REHEARSAL`, { path, logicalId });
    }
  }

  /** The file of a template (by its path, '' the root) in the assembly folder. */
  templateFile(stack: string): string {
    const loaded = this.templates.get(stack);
    if (!loaded) throw new AssemblyError(`No template "${stack}".`);
    return join(this.dir, loaded.file);
  }

  /** A resource's raw definition, as its template has it. */
  definition(stack: string, logicalId: string): RawResource {
    return this.raw(stack, logicalId);
  }

  /** Every template's path ('' is the root). */
  stacks(): string[] {
    return [...this.templates.keys()];
  }

  /** The resources of every template, of one type when given, with their properties resolved. */
  resources(type?: string): AssemblyResource[] {
    const out: AssemblyResource[] = [];
    for (const { path, template } of this.templates.values()) {
      for (const [logicalId, raw] of Object.entries(template.Resources)) {
        if (type && raw.Type !== type) continue;
        if (raw.Condition && !this.condition(path, raw.Condition)) continue;
        out.push({
          stack: path,
          logicalId,
          type: raw.Type,
          properties: this.resolve(path, raw.Properties ?? {}) as Record<string, unknown>,
          path: String(raw.Metadata?.['aws:cdk:path'] ?? `${path}/${logicalId}`),
        });
      }
    }
    return out;
  }

  /** The unresolved resources of one type: their keys and metadata, before anything is provisioned. */
  rawResources(type: string): { stack: string; logicalId: string; raw: RawResource }[] {
    return this.allRaw().filter((r) => r.raw.Type === type);
  }

  /** Every unresolved resource of every template. */
  allRaw(): { stack: string; logicalId: string; raw: RawResource }[] {
    const out: { stack: string; logicalId: string; raw: RawResource }[] = [];
    for (const { path, template } of this.templates.values())
      for (const [logicalId, raw] of Object.entries(template.Resources)) out.push({ stack: path, logicalId, raw });
    return out;
  }

  /** Resolves one property of one resource (for a provisioner that needs only some of them). */
  property(stack: string, logicalId: string, name: string): unknown {
    return this.resolve(stack, this.raw(stack, logicalId).Properties?.[name]);
  }

  /** Sets what a provisioned resource's Ref and attributes give. */
  setPhysical(stack: string, logicalId: string, physical: Physical): void {
    this.raw(stack, logicalId);
    this.physical.set(key(stack, logicalId), physical);
  }

  /** What Ref gives for a resource: its provisioned value, else its default physical name. */
  ref(stack: string, logicalId: string): string {
    return this.physicalOf(stack, logicalId).ref;
  }

  /** A resource's attribute (Fn::GetAtt); nested stacks' `Outputs.<name>` resolve in the nested template. */
  attribute(stack: string, logicalId: string, attribute: string): unknown {
    const raw = this.raw(stack, logicalId);
    if (raw.Type === 'AWS::CloudFormation::Stack' && attribute.startsWith('Outputs.')) {
      const nestedPath = stack ? `${stack}/${logicalId}` : logicalId;
      const output = this.templates.get(nestedPath)?.template.Outputs?.[attribute.slice('Outputs.'.length)];
      if (!output) throw new AssemblyError(`${nestedPath} has no output ${attribute}.`);
      return this.resolve(nestedPath, output.Value);
    }
    const value = this.physicalOf(stack, logicalId).attributes[attribute];
    if (value === undefined)
      throw new AssemblyError(
        `Fn::GetAtt ${stack ? `${stack}/` : ''}${logicalId}.${attribute}: the rehearsal has no value for it ` +
          `(${raw.Type}${this.physical.has(key(stack, logicalId)) ? '' : ', not provisioned'}).`,
      );
    return value;
  }

  /** Resolves any template value in the context of one template. */
  resolve(stack: string, value: unknown): unknown {
    return resolveValue(value, this.context(stack));
  }

  /** The resolved value of one of the root template's outputs. */
  output(name: string): unknown {
    const output = this.templates.get('')!.template.Outputs?.[name];
    return output === undefined ? undefined : this.resolve('', output.Value);
  }

  /**
   * The functions whose definitions resolve already: before the custom resources ran, those whose
   * environment needs none of their attributes (the custom resources' own functions among them).
   */
  functionsResolvable(): { spec: FunctionSpec }[] {
    return this.functions(true).map((spec) => ({ spec }));
  }

  /**
   * Every role of the assembly by its ARN, with its identity policies: its inline ones and the
   * AWS::IAM::Policy resources attached to it (resolved).
   */
  rolePolicies(): Map<string, { name: string; document: PolicyDocument }[]> {
    const policiesByRole = new Map<string, { name: string; document: PolicyDocument }[]>();
    const attach = (role: string, policy: { name: string; document: PolicyDocument }) =>
      policiesByRole.set(role, [...(policiesByRole.get(role) ?? []), policy]);
    for (const policy of this.resources('AWS::IAM::Policy')) {
      const document = policy.properties.PolicyDocument as PolicyDocument;
      for (const role of (policy.properties.Roles as string[] | undefined) ?? [])
        attach(role, { name: String(policy.properties.PolicyName ?? policy.logicalId), document });
    }
    const roles = new Map<string, { name: string; document: PolicyDocument }[]>();
    for (const role of this.resources('AWS::IAM::Role')) {
      const name = this.ref(role.stack, role.logicalId);
      for (const inline of (role.properties.Policies as { PolicyName: string; PolicyDocument: PolicyDocument }[]) ?? [])
        attach(name, { name: inline.PolicyName, document: inline.PolicyDocument });
      roles.set(String(this.attribute(role.stack, role.logicalId, 'Arn')), policiesByRole.get(name) ?? []);
    }
    return roles;
  }

  /** The Lambda functions, with code folders, environments and their roles' policies. */
  functions(skipUnresolvable = false): FunctionSpec[] {
    const roles = this.rolePolicies();
    return this.rawResources('AWS::Lambda::Function').flatMap(({ stack, logicalId, raw }) => {
      let properties: Record<string, unknown>;
      try {
        properties = this.resolve(stack, raw.Properties ?? {}) as Record<string, unknown>;
      } catch (error) {
        if (skipUnresolvable) return [];
        throw error;
      }
      const assetPath = raw.Metadata?.['aws:asset:path'];
      const where = `${stack ? `${stack}/` : ''}${logicalId}`;
      if (typeof assetPath !== 'string' || !existsSync(join(this.dir, assetPath)))
        throw new AssemblyError(`Function ${where} has no asset folder in ${this.dir} (aws:asset:path).`);
      const roleArn = String(properties.Role);
      const policies = roles.get(roleArn);
      if (!policies) throw new AssemblyError(`Function ${where}: its role ${roleArn} is not in the assembly.`);
      const environment = (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
      const spec: FunctionSpec = {
        key: where,
        logicalId,
        name: this.ref(stack, logicalId),
        arn: String(this.attribute(stack, logicalId, 'Arn')),
        codeDir: join(this.dir, assetPath),
        handler: String(properties.Handler ?? 'index.handler'),
        runtime: String(properties.Runtime ?? ''),
        memoryMb: Number(properties.MemorySize ?? 128),
        timeoutSeconds: Number(properties.Timeout ?? 3),
        reservedConcurrency:
          properties.ReservedConcurrentExecutions === undefined
            ? undefined
            : Number(properties.ReservedConcurrentExecutions),
        environment: Object.fromEntries(Object.entries(environment ?? {}).map(([k, v]) => [k, String(v)])),
        roleArn,
        policies,
      };
      return [spec];
    });
  }

  private raw(stack: string, logicalId: string): RawResource {
    const raw = this.templates.get(stack)?.template.Resources[logicalId];
    if (!raw) throw new AssemblyError(`No resource ${logicalId} in template "${stack || 'root'}".`);
    return raw;
  }

  private physicalOf(stack: string, logicalId: string): Physical {
    const set = this.physical.get(key(stack, logicalId));
    if (set) return set;
    const made = defaultPhysical(this.raw(stack, logicalId).Type, logicalId, this.templates.get(stack)!.stackName);
    this.physical.set(key(stack, logicalId), made);
    return made;
  }

  private condition(stack: string, name: string): boolean {
    const expression = this.templates.get(stack)?.template.Conditions?.[name];
    if (expression === undefined) throw new AssemblyError(`No condition ${name} in template "${stack || 'root'}".`);
    return Boolean(this.resolve(stack, expression));
  }

  private context(stack: string): ResolveContext {
    const loaded = this.templates.get(stack);
    if (!loaded) throw new AssemblyError(`No template "${stack}".`);
    return {
      pseudo: {
        'AWS::AccountId': this.account,
        'AWS::Region': this.region,
        'AWS::Partition': 'aws',
        'AWS::URLSuffix': 'amazonaws.com',
        'AWS::StackName': loaded.stackName,
        'AWS::StackId': `arn:aws:cloudformation:${this.region}:${this.account}:stack/${loaded.stackName}/rehearsal`,
      },
      parameter: (name) => this.parameter(loaded, name),
      hasResource: (logicalId) => logicalId in loaded.template.Resources,
      ref: (logicalId) => this.ref(stack, logicalId),
      attribute: (logicalId, attribute) => this.attribute(stack, logicalId, attribute),
      condition: (name) => this.condition(stack, name),
      mapping: (map, top, second) => loaded.template.Mappings?.[map]?.[top]?.[second],
    };
  }

  private parameter(loaded: LoadedTemplate, name: string): unknown {
    const declared = loaded.template.Parameters?.[name];
    if (!declared) return undefined;
    if (loaded.parent) {
      const marker = `${loaded.path}#${name}`;
      if (this.resolving.has(marker)) throw new AssemblyError(`Parameter ${marker} refers to itself.`);
      this.resolving.add(marker);
      try {
        const given = (this.raw(loaded.parent.path, loaded.parent.logicalId).Properties?.Parameters ?? {}) as Record<
          string,
          unknown
        >;
        if (name in given) return this.resolve(loaded.parent.path, given[name]);
      } finally {
        this.resolving.delete(marker);
      }
    }
    // The bootstrap version's SSM parameter: any recent bootstrap qualifies.
    if (declared.Type?.startsWith('AWS::SSM::Parameter::Value')) return '30';
    if (declared.Default !== undefined) return declared.Default;
    throw new AssemblyError(`Parameter ${name} of template "${loaded.path || 'root'}" has no value.`);
  }
}

const key = (stack: string, logicalId: string) => `${stack}/${logicalId}`;
