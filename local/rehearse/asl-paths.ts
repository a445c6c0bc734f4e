/**
 * The data handling of the Amazon States Language (JSONPath query language) for the interpreter
 * (asl.ts): reference paths (`$.a.b`, `$['a']`, `$.list[0]`, `$$.Execution.Id` on the context
 * object), payload templates (Parameters, ResultSelector: keys ending in `.$` take a path's
 * value), ResultPath placement, and the Choice rules with every comparison operator of the
 * specification and And/Or/Not. Intrinsic functions (`States.Format(...)`) are refused
 * (States.Runtime): the stack uses none.
 */

export class StatesError extends Error {
  constructor(
    readonly error: string,
    override readonly cause: string,
  ) {
    super(`${error}: ${cause}`);
    this.name = 'StatesError';
  }
}

type Json = unknown;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A reference path's steps ('$' alone is none); throws States.Runtime on what it cannot parse. */
function steps(path: string): (string | number)[] {
  const body = path.startsWith('$$') ? path.slice(2) : path.slice(1);
  if (!path.startsWith('$')) throw new StatesError('States.Runtime', `"${path}" is not a path`);
  const out: (string | number)[] = [];
  const token = /\.([^.[\]]+)|\['([^']*)'\]|\[(\d+)\]/y;
  let at = 0;
  while (at < body.length) {
    token.lastIndex = at;
    const m = token.exec(body);
    if (!m) throw new StatesError('States.Runtime', `the path "${path}" is not a reference path the rehearsal reads`);
    out.push(m[3] !== undefined ? Number(m[3]) : (m[1] ?? m[2])!);
    at = token.lastIndex;
  }
  return out;
}

/** The value at `path` in `data` (or in `context` for `$$` paths); States.Runtime when absent. */
export function readPath(path: string, data: Json, context: Json): Json {
  let value = path.startsWith('$$') ? context : data;
  for (const step of steps(path)) {
    const next =
      typeof step === 'number'
        ? Array.isArray(value)
          ? value[step]
          : undefined
        : isObject(value) && step in value
          ? value[step]
          : undefined;
    if (next === undefined) {
      throw new StatesError(
        'States.Runtime',
        `the path "${path}" matches nothing in ${JSON.stringify(data)?.slice(0, 200)}`,
      );
    }
    value = next;
  }
  return value;
}

/** Whether the path names a value (Choice's IsPresent). */
export function hasPath(path: string, data: Json, context: Json): boolean {
  try {
    readPath(path, data, context);
    return true;
  } catch {
    return false;
  }
}

/** InputPath and OutputPath: `null` gives `{}`, absent gives the value itself. */
export function selectPath(path: unknown, data: Json, context: Json): Json {
  if (path === undefined) return data;
  if (path === null) return {};
  return readPath(String(path), data, context);
}

/** A payload template with its `.$` keys resolved against `data` (or the context object). */
export function resolveTemplate(template: Json, data: Json, context: Json): Json {
  if (Array.isArray(template)) return template.map((t) => resolveTemplate(t, data, context));
  if (!isObject(template)) return template;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith('.$')) {
      const expression = String(value);
      if (expression.startsWith('States.')) {
        throw new StatesError('States.Runtime', `intrinsic functions are not rehearsed (${expression})`);
      }
      out[key.slice(0, -2)] = readPath(expression, data, context);
    } else {
      out[key] = resolveTemplate(value, data, context);
    }
  }
  return out;
}

/** ResultPath: the result placed into (a copy of) the raw input. */
export function placeResult(resultPath: unknown, input: Json, result: Json): Json {
  if (resultPath === null) return input;
  if (resultPath === undefined || resultPath === '$') return result;
  const path = String(resultPath);
  if (path.startsWith('$$')) throw new StatesError('States.Runtime', `ResultPath ${path} cannot name the context`);
  const where = steps(path);
  const root: unknown = structuredClone(input);
  if (!isObject(root)) throw new StatesError('States.Runtime', `ResultPath ${path} needs an object input`);
  let at: Record<string, unknown> = root;
  where.forEach((step, i) => {
    if (typeof step === 'number') throw new StatesError('States.Runtime', `ResultPath ${path} cannot index an array`);
    if (i === where.length - 1) at[step] = result;
    else {
      if (!isObject(at[step])) at[step] = {};
      at = at[step] as Record<string, unknown>;
    }
  });
  return root;
}

const isTimestamp = (v: unknown): v is string =>
  typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) && !isNaN(Date.parse(v));

/** StringMatches: `*` any run of characters, `\*` and `\\` escaped. */
function globMatches(value: string, pattern: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '*') re += '.*';
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's').test(value);
}

type Comparison = (a: unknown, b: unknown) => boolean;
const ordered = <T>(check: (v: unknown) => v is T, key: (v: T) => number | string) => {
  const cmp =
    (test: (d: number) => boolean): Comparison =>
    (a, b) => {
      if (!check(a) || !check(b)) return false;
      const [x, y] = [key(a), key(b)];
      return test(x < y ? -1 : x > y ? 1 : 0);
    };
  return {
    Equals: cmp((d) => d === 0),
    LessThan: cmp((d) => d < 0),
    GreaterThan: cmp((d) => d > 0),
    LessThanEquals: cmp((d) => d <= 0),
    GreaterThanEquals: cmp((d) => d >= 0),
  };
};
const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number';

const COMPARISONS: Record<string, Comparison> = {};
for (const [family, ops] of [
  ['String', ordered(isString, (s) => s)],
  ['Numeric', ordered(isNumber, (n) => n)],
  ['Timestamp', ordered(isTimestamp, (t) => Date.parse(t))],
] as const) {
  for (const [name, fn] of Object.entries(ops)) COMPARISONS[`${family}${name}`] = fn;
}
COMPARISONS.BooleanEquals = (a, b) => typeof a === 'boolean' && a === b;
COMPARISONS.StringMatches = (a, b) => typeof a === 'string' && typeof b === 'string' && globMatches(a, b);

const TYPE_TESTS: Record<string, (v: unknown, present: boolean) => boolean> = {
  IsPresent: (_v, present) => present,
  IsNull: (v, present) => present && v === null,
  IsNumeric: (v, present) => present && typeof v === 'number',
  IsString: (v, present) => present && typeof v === 'string',
  IsBoolean: (v, present) => present && typeof v === 'boolean',
  IsTimestamp: (v, present) => present && isTimestamp(v),
};

/** One Choice rule (or a nested And/Or/Not) against the state's effective input. */
export function choiceMatches(rule: Record<string, unknown>, data: Json, context: Json): boolean {
  if (Array.isArray(rule.And)) return rule.And.every((r) => choiceMatches(r as Record<string, unknown>, data, context));
  if (Array.isArray(rule.Or)) return rule.Or.some((r) => choiceMatches(r as Record<string, unknown>, data, context));
  if (isObject(rule.Not)) return !choiceMatches(rule.Not, data, context);
  const variable = String(rule.Variable);
  for (const [op, operand] of Object.entries(rule)) {
    if (op === 'Variable' || op === 'Next') continue;
    const test = TYPE_TESTS[op];
    if (test) {
      const present = hasPath(variable, data, context);
      return test(present ? readPath(variable, data, context) : undefined, present) === operand;
    }
    const byPath = op.endsWith('Path');
    const compare = COMPARISONS[byPath ? op.slice(0, -4) : op];
    if (!compare) throw new StatesError('States.Runtime', `the Choice operator ${op} is not rehearsed`);
    const expected = byPath ? readPath(String(operand), data, context) : operand;
    return compare(readPath(variable, data, context), expected);
  }
  throw new StatesError('States.Runtime', `a Choice rule without a comparison: ${JSON.stringify(rule)}`);
}
