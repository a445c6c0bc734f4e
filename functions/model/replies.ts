/**
 * What a route answers, declared beside it: each handler module's `schemas.replies`, status →
 * reply. `http()` (middleware/http.ts) types the handler's `{ status, body }` by it, and the
 * OpenAPI document (lib/openapi/document.ts) takes the route's answers from it: a success's body
 * schema, or no content, bytes, a stream, a redirect; and the errors of the route's own beside
 * those every route of its kind answers (a `failure`, thrown, never returned). Nothing checks a
 * reply at run time (a cost on every request): the integration suite checks every answer against
 * the document (test/support/openapi-check.ts).
 *
 * Also the small reply shapes several routes share: `Ok`, the cursor, a page of items, the 413s. The
 * resources as components are model/resources.ts's; a shape one route answers lives in its module.
 * This module imports nothing of the project but the schema library: a route that answers no
 * resource (health, the preflights, sign-in) does not bundle model.ts for its replies.
 */
import * as z from '../platform/zod.js';

/** A JSON answer whose body is `body`'s output. */
export interface JsonReply<B extends z.core.$ZodType = z.core.$ZodType> {
  readonly description: string;
  readonly body: B;
}
/** An answer without a body (204, 416…). */
export interface EmptyReply {
  readonly description: string;
  readonly empty: true;
}
/** An answer to a CORS preflight (OPTIONS): not an operation of the document, so never in it. */
export interface PreflightReply {
  readonly description: string;
  readonly preflight: true;
}
/** A redirect without a body; `redirect` says what its `Location` is. */
export interface RedirectReply {
  readonly description: string;
  readonly redirect: string;
}
/** Raw bytes of this content type (files, a page), returned as `binary`. */
export interface BytesReply {
  readonly description: string;
  readonly bytes: string;
}
/** A body written as it goes, of this content type (the event stream), returned as `stream`. */
export interface StreamReply {
  readonly description: string;
  readonly stream: string;
}
/** An error of this route's own (the envelope, §1.7): thrown as a domain error, never returned. */
export interface FailureReply {
  readonly description: string;
  readonly failure: true;
}

export type ReplyDoc =
  JsonReply | EmptyReply | PreflightReply | RedirectReply | BytesReply | StreamReply | FailureReply;
/** A route's answers by status. */
export type Replies = { readonly [status: number]: ReplyDoc };

export const json = <B extends z.core.$ZodType>(description: string, body: B): JsonReply<B> => ({ description, body });
export const noContent = (description: string): EmptyReply => ({ description, empty: true });
export const preflight = (): PreflightReply => ({ description: 'A CORS preflight (OPTIONS).', preflight: true });
export const redirect = (description: string, location: string): RedirectReply => ({ description, redirect: location });
export const bytes = (description: string, contentType = 'application/octet-stream'): BytesReply => ({
  description,
  bytes: contentType,
});
export const stream = (description: string, contentType: string): StreamReply => ({ description, stream: contentType });
export const failure = (description: string): FailureReply => ({ description, failure: true });

/** 413 of a message's text field (§2.2). */
export const tooLarge = (field: string): FailureReply =>
  failure(`PAYLOAD_TOO_LARGE: \`${field}\` is over the content limit (§2.2: 100,000 bytes).`);
/** 413 and 415 of the upload routes (§5.6.2). */
export const uploadRefused = {
  413: failure('PAYLOAD_TOO_LARGE: the file or the upload body exceeds maxUploadBytes (§5.6.2).'),
  415: failure(
    'UNSUPPORTED_MEDIA_TYPE: the type is not allowed (SVG never is), or the bytes do not decode as the image declared (§5.6.2).',
  ),
} as const;

// Marked pure, so a bundle that answers neither (health, the preflights) drops them: esbuild keeps
// an unused top-level call unless told it has no side effects.
export const Ok = /* @__PURE__ */ z.strictObject({ ok: /* @__PURE__ */ z.literal(true) });

export const Cursor = /* @__PURE__ */ z
  .strictObject({ next: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()), hasMore: /* @__PURE__ */ z.boolean() })
  .check(
    /* @__PURE__ */ z.meta({ id: 'Cursor', description: 'Keyset pagination (§1.9): send `next` back as `cursor`.' }),
  );
/** A page of items (§1.9). */
export const page = <T extends z.core.$ZodType>(item: T) => z.strictObject({ data: z.array(item), cursor: Cursor });
