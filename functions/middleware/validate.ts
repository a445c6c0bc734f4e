/**
 * Body parsing and schema validation of path, query and body (contract §1.2, §1.8).
 * Malformed JSON → 400 `Malformed JSON in request body`; shape errors → 400
 * `Request validation failed.` with `{ formErrors, fieldErrors }` keyed by top-level field.
 */
import * as z from '../platform/zod.js';
import { SchemaValidationError, ValidationError } from '../errors.js';
import { LIMITS } from '../limits.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import type { HttpEvent, HttpMiddleware } from './types.js';
import { header, stateOf } from './types.js';

export interface InputSchemas {
  path?: z.core.$ZodType;
  query?: z.core.$ZodType;
  body?: z.core.$ZodType;
  /** Message for malformed JSON; a few routes use `Invalid JSON body.` (§1.2). */
  malformedJsonMessage?: string;
  /**
   * An optional body read whatever the content type (message complete, §5.4.4): none, empty
   * or whitespace-only is `{}`; anything else must be a JSON object.
   */
  optionalObjectBody?: boolean;
  /**
   * A body no JSON schema describes (a media upload, multipart or JSON with base64 data,
   * §5.6.2), read by the route itself at this stage: its errors are body errors, answered
   * before the Idempotency-Key is looked at (§1.14), and what it returns is the request's body
   * for the handler and for the key's fingerprint (§1.10: byte arrays count by their digest).
   */
  readBody?: (event: HttpEvent, config: InstanceConfig) => Promise<unknown>;
}

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(contentType.trim());

export function rawBody(event: HttpEvent): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The body as JSON, `{}` when it is not sent as JSON (§1.2). */
export function parseJsonBody(event: HttpEvent, malformedMessage: string): unknown {
  if (!isJson(header(event, 'content-type'))) return {};
  try {
    return JSON.parse(rawBody(event));
  } catch {
    throw new ValidationError(malformedMessage);
  }
}

function collect(
  schema: z.core.$ZodType | undefined,
  value: unknown,
  errors: { formErrors: string[]; fieldErrors: Record<string, string[]> },
): unknown {
  if (!schema) return value;
  const parsed = z.safeParse(schema, value);
  if (parsed.success) return parsed.data;
  const flat = z.flattenError(parsed.error);
  errors.formErrors.push(...flat.formErrors);
  for (const [field, messages] of Object.entries(flat.fieldErrors as Record<string, string[] | undefined>)) {
    if (!messages?.length) continue;
    if (!Object.hasOwn(errors.fieldErrors, field)) errors.fieldErrors[field] = [];
    errors.fieldErrors[field]!.push(...messages);
  }
  return undefined;
}

/** Parses `value` with `schema`, or throws the schema's VALIDATION_ERROR. */
export function parseOrThrow<S extends z.core.$ZodType>(schema: S, value: unknown): z.output<S> {
  const errors = { formErrors: [] as string[], fieldErrors: {} as Record<string, string[]> };
  const parsed = collect(schema, value, errors);
  if (errors.formErrors.length > 0 || Object.keys(errors.fieldErrors).length > 0) {
    throw new SchemaValidationError(errors.formErrors, errors.fieldErrors);
  }
  return parsed as z.output<S>;
}

/** See InputSchemas.optionalObjectBody. */
export function parseOptionalObjectBody(event: HttpEvent, malformedMessage: string): unknown {
  const text = rawBody(event);
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ValidationError(malformedMessage);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ValidationError('JSON body must be an object.');
  return parsed;
}

/**
 * Shape rules every JSON body keeps, whatever its route (docs/architecture.md "Limits"), reported per top-level
 * field: no object key `__proto__` at any level (JSON.parse makes it an own key, but any copy by
 * assignment turns it into the object's prototype, and reading it back from DynamoDB drops it: it
 * could never round-trip), and no field nested deeper than LIMITS.jsonDepth (DynamoDB nests 32
 * levels; recursive code, the idempotency fingerprint included, must never see a deeper value).
 * Iterative, so a body nested a million levels deep costs a walk, not a stack overflow. Fields the
 * schema drops (unknown fields, §1.2) are exempt from the depth rule, since they are ignored.
 */
function checkShape(
  raw: unknown,
  isKept: (field: string) => boolean,
  errors: { formErrors: string[]; fieldErrors: Record<string, string[]> },
): void {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return;
  for (const [field, value] of Object.entries(raw)) {
    if (field === '__proto__') {
      // Not a field name: `fieldErrors.__proto__` would be the prototype, so a form error.
      errors.formErrors.push('Object keys must not be "__proto__".');
      continue;
    }
    // Own keys only: a field named `constructor` must not find Object's.
    const add = (message: string) => {
      if (!Object.hasOwn(errors.fieldErrors, field)) errors.fieldErrors[field] = [];
      errors.fieldErrors[field]!.push(message);
    };
    const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
    let tooDeep = false;
    while (stack.length > 0) {
      const { v, depth } = stack.pop()!;
      if (typeof v !== 'object' || v === null) continue;
      if (depth + 1 > LIMITS.jsonDepth) tooDeep = true;
      const children = Array.isArray(v) ? (v as unknown[]) : Object.keys(v);
      if (!Array.isArray(v) && (children as string[]).includes('__proto__')) {
        add('Object keys must not be "__proto__".');
        break;
      }
      // Past the limit only `__proto__` keys still matter (an ignored field may be deep).
      for (const child of Array.isArray(v) ? children : Object.values(v)) stack.push({ v: child, depth: depth + 1 });
    }
    if (tooDeep && isKept(field) && !Object.hasOwn(errors.fieldErrors, field))
      add(`${field} must not nest deeper than ${LIMITS.jsonDepth} levels.`);
  }
}

/** A UTF-16 code unit of a surrogate pair standing alone: what `u` reads as a lone surrogate. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Whether every string in `value`, object keys included, at any depth, is well-formed Unicode.
 * A lone surrogate (`"\ud83d"`, which JSON allows) is no text: DynamoDB refuses it with an
 * InternalFailure, and no client could read it back as UTF-8. Iterative like checkShape; a
 * Buffer (an upload's bytes, InputSchemas.readBody) holds bytes, not text, and is skipped.
 */
function wellFormed(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return false;
      continue;
    }
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) continue;
    if (Array.isArray(v)) {
      stack.push(...(v as unknown[]));
      continue;
    }
    for (const [key, child] of Object.entries(v)) {
      if (LONE_SURROGATE.test(key)) return false;
      stack.push(child);
    }
  }
  return true;
}

/**
 * Every body field kept, checked for well-formed Unicode (docs/architecture.md "Limits"): one whose strings
 * or keys hold a lone surrogate is a schema error on that field (a key that is itself not
 * well-formed cannot name a field: a form error). Unknown fields are ignored, as ever (§1.2).
 */
function checkUnicode(
  raw: unknown,
  isKept: (field: string) => boolean,
  errors: { formErrors: string[]; fieldErrors: Record<string, string[]> },
): void {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return;
  for (const [field, value] of Object.entries(raw)) {
    if (!isKept(field) || wellFormed(value)) continue;
    if (LONE_SURROGATE.test(field)) {
      errors.formErrors.push('Object keys must be well-formed Unicode (no lone surrogates).');
      continue;
    }
    if (!Object.hasOwn(errors.fieldErrors, field)) errors.fieldErrors[field] = [];
    errors.fieldErrors[field]!.push(`${field} must be well-formed Unicode (no lone surrogates).`);
  }
}

/** Whether the schema keeps a body field: what it output, else (it failed) what its object shape names. */
function keptFields(schema: z.core.$ZodType, output: unknown): (field: string) => boolean {
  if (typeof output === 'object' && output !== null)
    return (field) => Object.prototype.hasOwnProperty.call(output, field);
  const def = schema._zod.def;
  if (def.type === 'object') {
    const { shape, catchall } = def as z.core.$ZodObjectDef;
    // A loose object keeps every field.
    const loose = catchall !== undefined && catchall._zod.def.type !== 'never';
    return (field) => loose || Object.prototype.hasOwnProperty.call(shape, field);
  }
  return () => true;
}

export function validate(schemas: InputSchemas): HttpMiddleware {
  return {
    before: async (request) => {
      const { event } = request;
      // A CORS preflight carries no input to check (the stream answers it itself).
      if (event.requestContext?.http?.method === 'OPTIONS') return;
      const state = stateOf(request);
      const malformed = schemas.malformedJsonMessage ?? 'Malformed JSON in request body';
      const body = !schemas.body
        ? undefined
        : schemas.optionalObjectBody
          ? parseOptionalObjectBody(event, malformed)
          : parseJsonBody(event, malformed);
      const errors = { formErrors: [] as string[], fieldErrors: {} as Record<string, string[]> };
      const path = collect(schemas.path, event.pathParameters ?? {}, errors);
      const query = collect(schemas.query, event.queryStringParameters ?? {}, errors);
      const validBody = collect(schemas.body, body, errors);
      if (schemas.body) {
        const isKept = keptFields(schemas.body, validBody);
        checkShape(body, isKept, errors);
        checkUnicode(body, isKept, errors);
      }
      const failed = () => errors.formErrors.length > 0 || Object.keys(errors.fieldErrors).length > 0;
      if (failed()) throw new SchemaValidationError(errors.formErrors, errors.fieldErrors);
      const read = schemas.readBody ? await schemas.readBody(event, state.config) : undefined;
      // A body the route reads itself (an upload's JSON: fileName, contentType) keeps the same rule.
      checkUnicode(read, () => true, errors);
      if (failed()) throw new SchemaValidationError(errors.formErrors, errors.fieldErrors);
      state.input = { path, query, body: schemas.body ? validBody : (read ?? {}) };
    },
  };
}

/** Query helpers shared by the route schemas (§1.2: literal booleans, decimal integers). */
export const queryBoolean = z.pipe(
  z.enum(['true', 'false']),
  z.transform((v) => v === 'true'),
);
export const queryInt = (min: number, max: number, fallback: number) => {
  const decimal = z.pipe(z.string().check(z.regex(/^-?\d+$/, 'Expected an integer')), z.transform(Number));
  const bounded = z.pipe(decimal, z.number().check(z.int(), z.gte(min), z.lte(max)));
  return z.pipe(
    z.optional(bounded),
    z.transform((v) => v ?? fallback),
  );
};
