/**
 * Input limits shared by the route schemas (http/schemas.ts and each handler's) and the validation
 * middleware (middleware/validate.ts: nesting depth), docs/architecture.md "Limits". The contract bounds little
 * (message text, uploads, tags); everything else a client sends ends up in a DynamoDB item, which
 * holds at most 400 KB and nests at most 32 levels, or in a key, which holds at most 1,024 bytes
 * (sort key) / 2,048 bytes (partition key). Each limit below keeps the largest item a route can
 * write under those, with room to spare; a value over a limit is a schema error (400
 * `VALIDATION_ERROR`, `fieldErrors.<field>`) that changes nothing.
 *
 * Budgets, in DynamoDB's own terms (a map or list costs 3 bytes plus 1 per element, a number 1
 * byte plus 1 per two digits, a name or string its UTF-8 bytes, null and booleans 1: the most a
 * JSON value can take stored is 4/3 of its JSON size, for a list of empty lists, `[[],[],…]`):
 * - a message item and its `message.created` event: content ≤ 300,000 bytes + trace ≤ 64 KiB of
 *   JSON (≤ ~87 KB stored) + ids ≈ 388 KB, under 409,600 bytes (the regression test writes it);
 * - a request item: title ≤ 1,000 characters (≤ 4 KB) + body ≤ 64 KiB + config, trace and
 *   resolution ≤ 64 KiB of JSON each (≤ ~87 KB stored each) ≈ 330 KB; its `request.resolved`
 *   event holds the resolution twice and the trace once, ≈ 262 KB.
 */
export const LIMITS = {
  /** JSON bytes of a free-form object: a trace, a request's config, a form's values. */
  freeJsonBytes: 64 * 1024,
  /**
   * Nesting of any body field (`{}` is one level). DynamoDB nests 32 levels, and an event holds a
   * trace inside its payload map, one level down; deeper values are refused before anything
   * (the idempotency fingerprint included) walks them.
   */
  jsonDepth: 30,
  /** A request's title (§5.5.1 says only "non-empty"). */
  requestTitleChars: 1_000,
  /** UTF-8 bytes of a request's body and of a text_input resolution's text. */
  requestTextBytes: 64 * 1024,
  /** Ids a client names (agent ids, typing agent ids, worker ids): configured ids are far shorter. */
  idChars: 1_000,
  /** Entries of a chat's agentIds (each must be a configured agent; duplicates are kept, §5.3.1). */
  agentIds: 100,
  /** A dispatch failure's reason: it becomes a system message's text and the batch's last error. */
  reasonChars: 10_000,
  /** A tag is at most 400 UTF-8 bytes, so a longer tag-suggestion prefix matches nothing. */
  tagBytes: 400,
  /** DynamoDB's number range, and the SDK's: beyond ±(2^53 − 1) it refuses to marshal a JS number. */
  smallestNumber: 1e-130,
} as const;
