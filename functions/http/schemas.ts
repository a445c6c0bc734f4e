/**
 * The route schemas' shared pieces (bounded strings, free-form JSON, client ids) and the checks
 * behind them (storable values, nesting depth), under the input limits of functions/limits.ts.
 */
import * as z from '../platform/zod.js';
import { LIMITS } from '../limits.js';

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Why a JSON value could not be stored as a DynamoDB map faithfully, or undefined. */
export function unstorable(value: unknown): string | undefined {
  // Iterative: the value may be nested deeper than the stack allows (validate.ts refuses that too).
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') {
      const magnitude = Math.abs(v);
      if (!Number.isFinite(v) || magnitude > Number.MAX_SAFE_INTEGER)
        return `Numbers must lie within ±${Number.MAX_SAFE_INTEGER}.`;
      if (magnitude !== 0 && magnitude < LIMITS.smallestNumber)
        return `Numbers other than 0 must be at least ${LIMITS.smallestNumber} in magnitude.`;
    } else if (Array.isArray(v)) {
      stack.push(...(v as unknown[]));
    } else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        if (key === '') return 'Object keys must not be empty.';
        stack.push(child);
      }
    }
  }
  return undefined;
}

/** Nesting depth of a JSON value (`{}` and `[]` are 1, scalars 0), without recursion. */
export function depthOf(value: unknown): number {
  let max = 0;
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, depth + 1);
    for (const child of Object.values(v)) stack.push({ v: child, depth: depth + 1 });
  }
  return max;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks a free-form value without copying it (zod's record would rebuild the object): its JSON
 * size and that DynamoDB can hold it as it is. Nesting and `__proto__` keys are checked for every
 * body field by middleware/validate.ts. Values of other types pass: the caller's own check
 * reports them (a rule error after the 404, where the contract orders it so).
 */
function checkFreeJson(field: string, value: unknown, ctx: z.core.$RefinementCtx): void {
  if (typeof value !== 'object' || value === null) return;
  // Too deep to serialize safely: middleware/validate.ts reports it on the field.
  if (depthOf(value) > LIMITS.jsonDepth) return;
  const bytes = utf8Bytes(JSON.stringify(value));
  if (bytes > LIMITS.freeJsonBytes) {
    ctx.addIssue({ code: 'custom', message: `${field} must be at most ${LIMITS.freeJsonBytes} bytes of JSON.` });
    return;
  }
  const problem = unstorable(value);
  if (problem) ctx.addIssue({ code: 'custom', message: `${field}: ${problem}` });
}

/** Any value; objects and arrays are bounded as free-form JSON (request config, form values). */
export const freeJson = (field: string) => z.unknown().check(z.superRefine((v, ctx) => checkFreeJson(field, v, ctx)));

/**
 * A free-form JSON object (a message's trace): kept exactly as sent, keys and all. Built on
 * `unknown` rather than a custom type, which the OpenAPI generator cannot render; the override
 * says what it accepts, and the cast gives the handler the object type the check guarantees.
 */
export const freeObject = (field: string, notObject: string) =>
  z.unknown().check(
    z.superRefine((v, ctx) => {
      if (!isPlainObject(v)) ctx.addIssue({ code: 'custom', message: notObject });
      else checkFreeJson(field, v, ctx);
    }),
    z.meta({ override: { type: 'object', description: 'A free-form JSON object (docs/architecture.md "Limits").' } }),
  ) as unknown as z.ZodMiniType<Record<string, unknown>>;

/** Any value; a string is bounded to `maxChars` characters (other types are the caller's rule). */
export const boundedChars = (field: string, maxChars: number) =>
  z.unknown().check(
    z.superRefine((v, ctx) => {
      if (typeof v === 'string' && v.length > maxChars)
        ctx.addIssue({ code: 'custom', message: `${field} must be at most ${maxChars} characters.` });
    }),
  );

/** Any value; a string is bounded to `maxBytes` UTF-8 bytes (other types are the caller's rule). */
export const boundedBytes = (field: string, maxBytes: number) =>
  z.unknown().check(
    z.superRefine((v, ctx) => {
      if (typeof v === 'string' && utf8Bytes(v) > maxBytes)
        ctx.addIssue({ code: 'custom', message: `${field} must be at most ${maxBytes} UTF-8 bytes.` });
    }),
  );

/** A client-named id: a string of at most LIMITS.idChars characters. */
export const clientId = (field: string) =>
  z.string().check(z.maxLength(LIMITS.idChars, `${field} must be at most ${LIMITS.idChars} characters.`));
