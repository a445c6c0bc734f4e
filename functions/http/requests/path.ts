/** The `{requestId}` path parameter. Any string; unknown ids are 404. */
import * as z from '../../platform/zod.js';
import { freeJson } from '../schemas.js';

export const requestPath = z.object({ requestId: z.string() });

/**
 * `trace` on create and PATCH: null is a schema error (contract §14 item 34); any other
 * non-object is the rule error `trace must be a JSON object.`, checked by the core. An object is
 * bounded and checked storable as any free-form JSON (../schemas.ts), and kept as sent.
 */
export const requestTrace = z.optional(
  freeJson('trace').check(z.refine<unknown>((v) => v !== null, { message: 'trace must be a JSON object.' })),
);
