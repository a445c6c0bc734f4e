/**
 * The content filtering Lambda applies to an event source mapping's records (FilterCriteria):
 * EventBridge's pattern syntax. A record goes to the function when any of the mapping's filters
 * matches it; Lambda drops the others (an SQS message is deleted, a stream record is passed by).
 *
 *   compileFilters(['{"eventName":["INSERT"]}', ...]) -> (record) => boolean   (throws on a bad pattern)
 *
 * A pattern is an object whose keys name fields of the record: an object value matches a nested
 * object, an array value lists alternatives for a leaf (any one matching is enough). Alternatives:
 * a literal (string, number, boolean, null), or one of `{exists: bool}`, `{prefix: s}`,
 * `{suffix: s}` (either may be `{"equals-ignore-case": s}`), `{"equals-ignore-case": s}`,
 * `{wildcard: "a*b"}`, `{numeric: [">", 0, "<=", 5]}`, `{"anything-but": literal | [literals] |
 * {prefix|suffix|equals-ignore-case|wildcard: s}}`. `$or` takes a list of patterns. Where the
 * record holds an array, a leaf matches when any element does. A pattern Lambda would refuse at
 * deployment (a leaf that is not an array, an unknown operator) throws here, so the rehearsal
 * fails where the deployment would.
 */

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type Leaf = (value: unknown, present: boolean) => boolean;
type Matcher = (record: unknown) => boolean;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class FilterPatternError extends Error {
  constructor(message: string) {
    super(`Invalid filter pattern definition: ${message}`);
    this.name = 'FilterPatternError';
  }
}

const bad = (message: string): never => {
  throw new FilterPatternError(message);
};

function wildcardRegex(pattern: string): RegExp {
  if (pattern.includes('**')) bad(`wildcard "${pattern}" has consecutive *`);
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

/** A string test: plain, or `{"equals-ignore-case": s}` (for prefix and suffix). */
function stringTest(operand: unknown, op: 'prefix' | 'suffix'): (s: string) => boolean {
  const ignoreCase = isObject(operand) && typeof operand['equals-ignore-case'] === 'string';
  const text = ignoreCase ? (operand['equals-ignore-case'] as string) : operand;
  if (typeof text !== 'string') return bad(`${op} takes a string`);
  const want = ignoreCase ? text.toLowerCase() : text;
  return (s) => {
    const v = ignoreCase ? s.toLowerCase() : s;
    return op === 'prefix' ? v.startsWith(want) : v.endsWith(want);
  };
}

function numericTest(operands: unknown): (n: number) => boolean {
  if (!Array.isArray(operands) || operands.length === 0 || operands.length % 2 !== 0 || operands.length > 4) {
    return bad('numeric takes one or two [operator, number] pairs');
  }
  const tests: ((n: number) => boolean)[] = [];
  for (let i = 0; i < operands.length; i += 2) {
    const [op, bound] = [operands[i], operands[i + 1]];
    if (typeof bound !== 'number') return bad(`numeric bound ${JSON.stringify(bound)} is not a number`);
    const compare: Record<string, (n: number) => boolean> = {
      '=': (n) => n === bound,
      '<': (n) => n < bound,
      '<=': (n) => n <= bound,
      '>': (n) => n > bound,
      '>=': (n) => n >= bound,
    };
    const test = compare[String(op)];
    if (!test) return bad(`numeric operator ${JSON.stringify(op)}`);
    tests.push(test);
  }
  return (n) => tests.every((t) => t(n));
}

const sameLiteral = (want: Json, value: unknown): boolean =>
  typeof want === 'number' ? typeof value === 'number' && value === want : value === want;

function anythingBut(operand: unknown): Leaf {
  if (Array.isArray(operand)) {
    const list = operand as Json[];
    return (v, present) => present && !list.some((w) => sameLiteral(w, v));
  }
  if (isObject(operand)) {
    const inner = leaf(operand);
    return (v, present) => present && typeof v === 'string' && !inner(v, present);
  }
  return (v, present) => present && !sameLiteral(operand as Json, v);
}

/** One alternative of a leaf's list. */
function leaf(alternative: unknown): Leaf {
  if (!isObject(alternative)) {
    if (Array.isArray(alternative)) return bad('a leaf alternative cannot be an array');
    const want = alternative as Json;
    return (v, present) => present && sameLiteral(want, v);
  }
  const keys = Object.keys(alternative);
  if (keys.length !== 1) return bad(`an operator object has one key, not ${JSON.stringify(keys)}`);
  const op = keys[0]!;
  const operand = alternative[op];
  switch (op) {
    case 'exists':
      if (typeof operand !== 'boolean') return bad('exists takes true or false');
      return (_v, present) => present === operand;
    case 'prefix':
    case 'suffix': {
      const test = stringTest(operand, op);
      return (v, present) => present && typeof v === 'string' && test(v);
    }
    case 'equals-ignore-case': {
      if (typeof operand !== 'string') return bad('equals-ignore-case takes a string');
      const want = operand.toLowerCase();
      return (v, present) => present && typeof v === 'string' && v.toLowerCase() === want;
    }
    case 'wildcard': {
      if (typeof operand !== 'string') return bad('wildcard takes a string');
      const re = wildcardRegex(operand);
      return (v, present) => present && typeof v === 'string' && re.test(v);
    }
    case 'numeric': {
      const test = numericTest(operand);
      return (v, present) => present && typeof v === 'number' && test(v);
    }
    case 'anything-but':
      return anythingBut(operand);
    default:
      return bad(`unknown operator "${op}"`);
  }
}

function leafList(key: string, alternatives: unknown[]): Matcher {
  if (alternatives.length === 0) return bad(`"${key}" lists no alternatives`);
  const tests = alternatives.map(leaf);
  return (container) => {
    const present = isObject(container) && key in container && container[key] !== undefined;
    const value = present ? (container as Record<string, unknown>)[key] : undefined;
    // An array in the record matches when any of its elements does (an empty one only `exists`).
    if (Array.isArray(value)) {
      return value.length === 0
        ? tests.some((t) => t(undefined, false))
        : value.some((v) => tests.some((t) => t(v, true)));
    }
    return tests.some((t) => t(value, present));
  };
}

function objectPattern(pattern: unknown, where: string): Matcher {
  if (!isObject(pattern)) return bad(`${where || 'the pattern'} must be an object`);
  const parts: Matcher[] = [];
  for (const [key, value] of Object.entries(pattern)) {
    const at = where ? `${where}.${key}` : key;
    if (key === '$or') {
      if (!Array.isArray(value) || value.length < 2) return bad(`${at} takes a list of at least two patterns`);
      const options = value.map((p, i) => objectPattern(p, `${at}[${i}]`));
      parts.push((record) => options.some((m) => m(record)));
    } else if (Array.isArray(value)) {
      parts.push(leafList(key, value));
    } else if (isObject(value)) {
      const inner = objectPattern(value, at);
      parts.push((container) => {
        const child = isObject(container) ? container[key] : undefined;
        return Array.isArray(child) ? child.some(inner) : isObject(child) && inner(child);
      });
    } else {
      return bad(`${at} must be an array of alternatives or an object, not ${JSON.stringify(value)}`);
    }
  }
  if (parts.length === 0) return bad(`${where || 'the pattern'} is empty`);
  return (record) => parts.every((m) => m(record));
}

/** One filter's pattern (a JSON string, as FilterCriteria holds it). */
export function compilePattern(pattern: string): Matcher {
  let parsed: unknown;
  try {
    parsed = JSON.parse(pattern);
  } catch {
    return bad(`not JSON: ${pattern}`);
  }
  return objectPattern(parsed, '');
}

/**
 * A mapping's FilterCriteria (`{ Filters: [{ Pattern }] }`, or undefined) as one test: records
 * matching any filter pass; with no filters every record passes.
 */
export function compileFilters(criteria: unknown): Matcher {
  if (criteria === undefined || criteria === null) return () => true;
  const filters = isObject(criteria) ? criteria.Filters : undefined;
  if (!Array.isArray(filters)) return bad('FilterCriteria.Filters must be a list');
  if (filters.length === 0) return () => true;
  if (filters.length > 5) return bad(`${filters.length} filters (Lambda allows 5 per mapping)`);
  const matchers = filters.map((f: unknown) => {
    const pattern = isObject(f) ? f.Pattern : undefined;
    if (typeof pattern !== 'string') return bad('a filter has no Pattern string');
    return compilePattern(pattern);
  });
  return (record) => matchers.some((m) => m(record));
}

/**
 * What an SQS filter sees of a message record: its body parsed when it is JSON (Lambda filters
 * on the body's fields then), as is otherwise.
 */
export function sqsFilterView(record: { body: string } & Record<string, unknown>): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(record.body);
    if (isObject(parsed)) return { ...record, body: parsed };
  } catch {
    // A plain-text body is matched as the string it is.
  }
  return record;
}
