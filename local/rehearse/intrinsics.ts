/**
 * CloudFormation's intrinsic functions, as the rehearsal resolves a template's values: Ref,
 * Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::If, Fn::Equals, Fn::Not, Fn::And,
 * Fn::Or, Condition, Fn::FindInMap, Fn::Base64. `AWS::NoValue` removes the property or array
 * element it stands in, as CloudFormation does. Fn::ImportValue and Fn::GetAZs have no local
 * meaning and are refused by name, so an assembly that needs them fails loudly.
 */
export interface ResolveContext {
  pseudo: Record<string, string>;
  /** A template parameter's value (undefined when the template declares no such parameter). */
  parameter(name: string): unknown;
  hasResource(logicalId: string): boolean;
  ref(logicalId: string): string;
  attribute(logicalId: string, attribute: string): unknown;
  condition(name: string): boolean;
  mapping(map: string, top: string, second: string): unknown;
}

/** Stands for AWS::NoValue until the enclosing object or array drops it. */
const NO_VALUE = Symbol('AWS::NoValue');

export function resolveValue(value: unknown, context: ResolveContext): unknown {
  const resolved = resolve(value, context);
  return resolved === NO_VALUE ? undefined : resolved;
}

function resolve(value: unknown, context: ResolveContext): unknown {
  if (Array.isArray(value)) return value.map((v) => resolve(v, context)).filter((v) => v !== NO_VALUE);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1) {
    const [name, argument] = entries[0]!;
    if (name === 'Ref' || name.startsWith('Fn::') || name === 'Condition') return intrinsic(name, argument, context);
  }
  const out: Record<string, unknown> = {};
  for (const [name, v] of entries) {
    const r = resolve(v, context);
    if (r !== NO_VALUE) out[name] = r;
  }
  return out;
}

function ref(name: string, context: ResolveContext): unknown {
  if (name === 'AWS::NoValue') return NO_VALUE;
  if (name in context.pseudo) return context.pseudo[name];
  if (context.hasResource(name)) return context.ref(name);
  const parameter = context.parameter(name);
  if (parameter === undefined) throw new Error(`Ref ${name}: no such resource, parameter or pseudo parameter.`);
  return parameter;
}

const text = (value: unknown, what: string): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`${what} needs a string, got ${JSON.stringify(value)}.`);
};

function intrinsic(name: string, argument: unknown, context: ResolveContext): unknown {
  const args = () => resolve(argument, context) as unknown[];
  switch (name) {
    case 'Ref':
      return ref(text(argument, 'Ref'), context);
    case 'Condition':
      return context.condition(text(argument, 'Condition'));
    case 'Fn::GetAtt': {
      const [logicalId, ...rest] = Array.isArray(argument)
        ? (argument as unknown[]).map((a) => text(resolve(a, context), 'Fn::GetAtt'))
        : text(argument, 'Fn::GetAtt').split('.');
      return context.attribute(logicalId!, rest.join('.'));
    }
    case 'Fn::Join': {
      const [separator, list] = args() as [string, unknown[]];
      return list.map((v) => text(v, 'Fn::Join')).join(separator);
    }
    case 'Fn::Select': {
      const [index, list] = args() as [unknown, unknown[]];
      const at = Number(index);
      if (!Array.isArray(list) || !(at >= 0 && at < list.length)) throw new Error(`Fn::Select ${at} out of range.`);
      return list[at];
    }
    case 'Fn::Split': {
      const [separator, source] = args() as [string, unknown];
      return text(source, 'Fn::Split').split(separator);
    }
    case 'Fn::Sub':
      return substitute(argument, context);
    case 'Fn::If': {
      const [condition, yes, no] = argument as [string, unknown, unknown];
      return resolve(context.condition(condition) ? yes : no, context);
    }
    case 'Fn::Equals': {
      const [a, b] = args();
      return JSON.stringify(a) === JSON.stringify(b);
    }
    case 'Fn::Not':
      return !(args()[0] as boolean);
    case 'Fn::And':
      return args().every(Boolean);
    case 'Fn::Or':
      return args().some(Boolean);
    case 'Fn::FindInMap': {
      const [map, top, second] = args().map((a) => text(a, 'Fn::FindInMap'));
      const found = context.mapping(map!, top!, second!);
      if (found === undefined) throw new Error(`Fn::FindInMap ${map}.${top}.${second}: no such entry.`);
      return found;
    }
    case 'Fn::Base64':
      return Buffer.from(text(resolve(argument, context), 'Fn::Base64')).toString('base64');
    default:
      throw new Error(`${name} is not supported by the rehearsal (it has no local meaning).`);
  }
}

/** Fn::Sub: `${Name}`, `${Name.Attribute}`, `${!Literal}`, with an optional map of its own variables. */
function substitute(argument: unknown, context: ResolveContext): string {
  const [template, variables] = Array.isArray(argument)
    ? [argument[0] as string, resolve(argument[1] ?? {}, context) as Record<string, unknown>]
    : [argument as string, {} as Record<string, unknown>];
  return text(template, 'Fn::Sub').replace(/\$\{(!?)([^}]+)\}/g, (_whole, literal: string, name: string) => {
    if (literal) return `\${${name}}`;
    if (name in variables) return text(variables[name], `Fn::Sub \${${name}}`);
    const dot = name.indexOf('.');
    if (dot > 0 && context.hasResource(name.slice(0, dot)))
      return text(context.attribute(name.slice(0, dot), name.slice(dot + 1)), `Fn::Sub \${${name}}`);
    return text(ref(name, context), `Fn::Sub \${${name}}`);
  });
}
