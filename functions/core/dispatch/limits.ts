/**
 * Dispatch's fixed limits: how long a claim waits, how large a payload part, a batch, a seal and a
 * claim's response may be, and how long the queue can hide a message.
 */

/** API Gateway ends a request after about 29 s; claims stop waiting at 25 s (§13 item 3). */
export const MAX_CLAIM_WAIT_MS = 25_000;
/**
 * Payload limits, in bytes of JSON: a stored part stays under DynamoDB's 400 KB item limit
 * (one input is at most a 300 KB message), a batch under a transaction's 4 MB, and a claim's
 * response under Lambda's 6 MB. A seal takes at most `SEAL_MAX_ITEMS` items per transaction.
 */
export const PART_MAX_BYTES = 380_000;
export const BATCH_MAX_BYTES = 3_000_000;
export const CLAIM_RESPONSE_MAX_BYTES = 5_000_000;
export const SEAL_MAX_ITEMS = 90;
/**
 * Inputs one batch takes at most: a seal lists them in the dispatch state (about 45 bytes
 * each) until they are deleted, and that item must stay well under 400 KB. More than this
 * many waiting behind one lease seal into consecutive batches.
 */
export const BATCH_MAX_INPUTS = 5000;

/**
 * The queue hides a message for at most 12 hours (SQS's visibility limit), so a lease, an
 * extension or a retry delay is capped there: a larger one (the contract sets no maximum) would
 * fail the queue call after the table decided, stranding the batch (issue 17, finding 4).
 */
export const MAX_HIDE_MS = 12 * 3600 * 1000;
export const hideable = (ms: number): number => Math.min(ms, MAX_HIDE_MS);
