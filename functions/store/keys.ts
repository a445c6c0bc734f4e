/**
 * The only place key values are spelled. The table has generic attributes (pk, sk,
 * gsiNpk/gsiNsk, see lib/table-schema.ts); meaning lives here.
 *
 * | entity            | pk                 | sk                          | indexes
 * |-------------------|--------------------|-----------------------------|------------------------------
 * | chat              | CHAT#<chatId>      | CHAT                        | gsi1-3 (chatListing, chatAttention)
 * | message           | CHAT#<chatId>      | MSG#<createdMs>#<messageId> |
 * | message pointer   | MSG#<messageId>    | PTR                         |
 * | stream chunk      | MSG#<messageId>    | CHUNK#<seq, 15 digits>      |
 * | open stream       | CHAT#<chatId>      | STREAM#<messageId>          |
 * | chat write turn   | CHAT#<chatId>      | TURN                        |
 * | media             | MEDIA#<mediaId>    | MEDIA                       |
 * | chat media entry  | CHAT#<chatId>      | MEDIA#<createdMs>#<mediaId> |
 * | upload session    | UPLOAD#<uploadId>  | UPLOAD                      | (TTL)
 * | dispatch state    | CHAT#<chatId>      | DSTATE                      | gsi3 (sparse, dispatchPending)
 * | dispatch batch    | BATCH#<batchId>    | BATCH                       | gsi3 (sparse, dispatchRepair)
 * | batch payload part| BATCH#<batchId>    | PART#<n, 15 digits>         |
 * | unsent batch ref  | CHAT#<chatId>      | BREF#<chat seq, 15 digits>  |
 * | dispatch input    | CHAT#<chatId>      | DIN#<createdMs>#<inputId>   |
 * | request           | CHAT#<chatId>      | REQ#<createdMs>#<requestId> | gsi1-2 (requestListing), gsi3 (sparse, requestTimerDue)
 * | request pointer   | REQ#<requestId>    | PTR                         |
 * | decision log head | DECISIONS          | HEAD                        |
 * | decision entry    | DECISIONS          | E#<seq, 15 digits>          |
 * | tag catalog entry | TAGS               | TAG#<ascii-lower name>#<name> |
 * | catalog part      | TAGCHG#<changeId>  | PART#<n, 15 digits>         | gsi3 (sparse: TAGS#PENDING until applied)
 * | event sequence    | SEQ                | EVENTS                      |
 * | event             | EVT#<seq / 100000> | <seq, 15 digits>            |
 * | ephemeral event   | EPH#<ms / 10000>   | <ms, 15 digits>#<eventId>   |
 * | idempotency       | IDEM#<sha256(key)> | IDEM                        |
 * | rate-limit window | RL#<client>        | RL                          |
 * | browser session   | SESSIONS           | SESSION#<sessionId>         | (TTL)
 * | setting           | SETTINGS           | <name>                      |
 * | generated secret  | SECRET#<name>      | SECRET                      | (never indexed)
 * | push subscription | PUSH               | SUB#<sha256(endpoint)>      |
 * | push sent mark    | PUSHSENT#<eventId> | SENT                        | (TTL)
 * | webhook claim     | HOOK#<eventId>     | CLAIM#<hookId>              | (TTL)
 * | webhook attempt   | HOOK#<eventId>     | TRY#<hookId>#<n, 15 digits> | (TTL)
 * | search manifest   | SEARCH             | MANIFEST                    |
 * | search log tail   | SEARCH             | TAIL                        | (local runtime only)
 * | replaced segment  | SEARCH#RETIRED     | <retiredMs>#<object key>    |
 */

/** Zero-padded so that string order is numeric order. 15 digits hold any epoch-ms or sequence. */
export const pad = (n: number): string => Math.trunc(n).toString().padStart(15, '0');
/** Times subtracted from this sort newest first in an ascending index (15 digits, as pad). */
const INVERTED_TIME = 999_999_999_999_999;

/** ASCII-only lowercase: tag prefix matching is case-insensitive for ASCII letters only. */
export const asciiLower = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * The secrets the service keeps in its table (Keys.generatedSecret): the keys that sign pagination
 * cursors and browser sessions (made on first use) and the stored secrets a deploy-time resource makes
 * (functions/jobs/stored-secrets.ts): the instance secret, the origin-verify value, the VAPID key pair.
 */
export const STORED_SECRET_NAMES = ['INSTANCE', 'ORIGIN_VERIFY', 'VAPID'] as const;
export type StoredSecretName = (typeof STORED_SECRET_NAMES)[number];
/** The secrets made on first use by the functions themselves (store/secrets-repo.ts generatedSecret). */
export type FirstUseSecretName = 'CURSOR' | 'SESSION';
export type GeneratedSecretName = FirstUseSecretName | StoredSecretName;
const SECRET_PREFIX = 'SECRET#';

export const EVENT_BUCKET_SIZE = 100_000;
/**
 * Ephemeral events (chunks, typing) are partitioned by the minute they were written in. Every open
 * stream Queries the current bucket on each poll, and the one before while its window (the last
 * poll and core/event-stream.ts ephemeralOverlapMs back) reaches into it: with 10 s buckets about
 * half of them (BENCH_ONLY=events, an idle stream: 168 DynamoDB calls a minute), with a minute a
 * few (152). The write rate into the current bucket is the same at any size, and a read returns
 * only what is newer than its window.
 */
export const EPHEMERAL_BUCKET_MS = 60_000;

export const Keys = {
  chat: (chatId: string) => ({ pk: `CHAT#${chatId}`, sk: 'CHAT' }),
  /** Index keys that place a chat in list order: pinned first, then last activity, then id (all desc). */
  chatListing: (chat: { id: string; pinned: boolean; is_archived: boolean; last_message_at: string | null }) => {
    const activity = chat.last_message_at ? Date.parse(chat.last_message_at) : 0;
    return {
      gsi1pk: 'CHATS',
      gsi1sk: `${chat.pinned ? 1 : 0}#${pad(activity)}#${chat.id}`,
      gsi2pk: chat.is_archived ? 'CHATS#ARCHIVED' : 'CHATS#ACTIVE',
    };
  },
  chatsIndex: (archived: boolean | undefined) =>
    archived === undefined
      ? { index: 'gsi1', pkName: 'gsi1pk', pk: 'CHATS' }
      : { index: 'gsi2', pkName: 'gsi2pk', pk: archived ? 'CHATS#ARCHIVED' : 'CHATS#ACTIVE' },
  /** Present only while a chat may have unread messages or pending requests (sparse gsi3). */
  chatAttention: (chatId: string) => ({ gsi3pk: 'ATTENTION', gsi3sk: chatId }),
  /** Held briefly by one of the writers of a chat that lost a race, so they take turns. */
  chatWriteTurn: (chatId: string) => ({ pk: `CHAT#${chatId}`, sk: 'TURN' }),
  attentionIndex: { index: 'gsi3', pkName: 'gsi3pk', pk: 'ATTENTION' },

  message: (chatId: string, createdAt: string, messageId: string) => ({
    pk: `CHAT#${chatId}`,
    sk: `MSG#${pad(Date.parse(createdAt))}#${messageId}`,
  }),
  messagesOf: (chatId: string) => ({ pk: `CHAT#${chatId}`, skPrefix: 'MSG#' }),
  /** Lower bound (exclusive) for messages created after `time`. */
  messagesAfter: (chatId: string, time: string) => ({
    pk: `CHAT#${chatId}`,
    skAfter: `MSG#${pad(Date.parse(time))}#~`,
  }),
  messagePointer: (messageId: string) => ({ pk: `MSG#${messageId}`, sk: 'PTR' }),
  /** The message id in a MSG#<messageId> partition key. */
  messageIdOf: (pk: string) => pk.slice('MSG#'.length),
  /** The creation time (epoch ms) in a message's sort key. */
  createdMsOf: (messageSk: string) => Number(messageSk.split('#')[1]),
  /** Chunk `seq` (1-based) of a streaming message: its own small item, assembled on read. */
  chunk: (messageId: string, seq: number) => ({ pk: `MSG#${messageId}`, sk: `CHUNK#${pad(seq)}` }),
  /** Chunks with from <= seq <= to. */
  chunkRange: (messageId: string, from: number, to: number) => ({
    pk: `MSG#${messageId}`,
    skFrom: `CHUNK#${pad(from)}`,
    skTo: `CHUNK#${pad(to)}`,
  }),
  /** Present while a message streams, so cancel-streaming finds a chat's open streams directly. */
  openStream: (chatId: string, messageId: string) => ({ pk: `CHAT#${chatId}`, sk: `STREAM#${messageId}` }),
  openStreamsOf: (chatId: string) => ({ pk: `CHAT#${chatId}`, skPrefix: 'STREAM#' }),

  media: (mediaId: string) => ({ pk: `MEDIA#${mediaId}`, sk: 'MEDIA' }),
  /** A chat's media, newest last by creation time then id: a small entry per medium (strongly consistent listing). */
  mediaEntry: (chatId: string, createdAt: string, mediaId: string) => ({
    pk: `CHAT#${chatId}`,
    sk: `MEDIA#${pad(Date.parse(createdAt))}#${mediaId}`,
  }),
  mediaEntriesOf: (chatId: string) => ({ pk: `CHAT#${chatId}`, skPrefix: 'MEDIA#' }),
  /** An upload session (a presigned POST awaiting its finalize), with a TTL. */
  uploadSession: (uploadId: string) => ({ pk: `UPLOAD#${uploadId}`, sk: 'UPLOAD' }),

  /**
   * Marks a chat's dispatch state in gsi3 while it has unsealed inputs or unsent batches; the
   * sort key is when that work last moved, so the sweeper finds work stranded by a crash.
   */
  dispatchPending: (at: string) => ({ gsi3pk: 'DISPATCH#PENDING', gsi3sk: at }),
  /**
   * Marks a batch header in gsi3 when a queue call on its message failed, so the sweeper
   * puts the message where the table says it belongs (sort key: when the call failed).
   */
  dispatchRepair: (at: string) => ({ gsi3pk: 'DISPATCH#REPAIR', gsi3sk: at }),
  /** The chat id in a CHAT#<chatId> partition key. */
  chatIdOf: (pk: string) => pk.slice('CHAT#'.length),
  /** Per-chat dispatch bookkeeping: the unsealed window, user typing, batch numbering. */
  dispatchState: (chatId: string) => ({ pk: `CHAT#${chatId}`, sk: 'DSTATE' }),
  /**
   * Dispatch inputs of a chat. Sealed ones are listed in the dispatch state's `taken_inputs`
   * until they are deleted (after the seal): the batch's payload parts hold their content.
   */
  dispatchInputsOf: (chatId: string) => ({ pk: `CHAT#${chatId}`, skPrefix: 'DIN#' }),
  batch: (batchId: string) => ({ pk: `BATCH#${batchId}`, sk: 'BATCH' }),
  /** The batch id in a BATCH#<batchId> partition key. */
  batchIdOf: (pk: string) => pk.slice('BATCH#'.length),
  /** The frozen payload of a batch, in parts of at most ~380 KB (kept off the small, often-updated header). */
  batchPart: (batchId: string, n: number) => ({ pk: `BATCH#${batchId}`, sk: `PART#${pad(n)}` }),
  batchPartsOf: (batchId: string) => ({ pk: `BATCH#${batchId}`, skPrefix: 'PART#' }),
  /** A sealed batch of a chat not yet handed to the queue, by its number in the chat. */
  batchRef: (chatId: string, seq: number) => ({ pk: `CHAT#${chatId}`, sk: `BREF#${pad(seq)}` }),

  request: (chatId: string, createdAt: string, requestId: string) => ({
    pk: `CHAT#${chatId}`,
    sk: `REQ#${pad(Date.parse(createdAt))}#${requestId}`,
  }),
  requestsOf: (chatId: string) => ({ pk: `CHAT#${chatId}`, skPrefix: 'REQ#' }),
  requestPointer: (requestId: string) => ({ pk: `REQ#${requestId}`, sk: 'PTR' }),
  /**
   * A request's places in the approvals lists (§5.5.6 GET /requests): gsi1 by status, gsi2 all
   * statuses, one sort key for both, ascending: pending with a deadline (soonest first), pending
   * without (oldest first), then closed (newest closing first: the time inverted).
   */
  requestListing: (r: {
    id: string;
    status: string;
    created_at: string;
    deadlineAt: string | null;
    closedAt: string | null;
  }) => ({
    gsi1pk: `REQUESTS#${r.status}`,
    gsi2pk: 'REQUESTS',
    gsi1sk:
      r.status === 'pending'
        ? r.deadlineAt !== null
          ? `0#${pad(Date.parse(r.deadlineAt))}#${r.id}`
          : `1#${pad(Date.parse(r.created_at))}#${r.id}`
        : `2#${pad(INVERTED_TIME - Date.parse(r.closedAt ?? r.created_at))}#${r.id}`,
  }),
  requestsIndex: (status: 'pending' | 'resolved' | 'cancelled' | 'all') =>
    status === 'all'
      ? { index: 'gsi2', pkName: 'gsi2pk', pk: 'REQUESTS' }
      : { index: 'gsi1', pkName: 'gsi1pk', pk: `REQUESTS#${status}` },
  /** The pending requests with a deadline, soonest first (gsi1 range). */
  requestsWithDeadlines: { pk: 'REQUESTS#pending', from: '0#', to: '0#~' },
  /**
   * Marks a pending request with a deadline in gsi3 at the time its next timer (a reminder or the
   * expiry) falls due; each reminder moves it on, the closing removes it. The sweep reads the
   * marks long overdue: the timers that were lost (requestTimersDueBy).
   */
  requestTimerDue: (dueMs: number, requestId: string) => ({
    gsi3pk: 'REQUESTS#TIMERS',
    gsi3sk: `${pad(dueMs)}#${requestId}`,
  }),
  /** The request timer marks due at or before `ms` (gsi3 range). */
  requestTimersDueBy: (ms: number) => ({ pk: 'REQUESTS#TIMERS', from: '0', to: `${pad(ms)}#~` }),

  /** The decision log (§5.5.6): its head (last seq and hash) and its entries by seq, one partition. */
  decisionHead: { pk: 'DECISIONS', sk: 'HEAD' },
  decision: (seq: number) => ({ pk: 'DECISIONS', sk: `E#${pad(seq)}` }),
  decisionsFrom: (seq: number) => ({ pk: 'DECISIONS', from: `E#${pad(seq)}`, to: `E#${'9'.repeat(15)}` }),

  dispatchInput: (chatId: string, createdAt: string, inputId: string) => ({
    pk: `CHAT#${chatId}`,
    sk: `DIN#${pad(Date.parse(createdAt))}#${inputId}`,
  }),

  /** One per normalized endpoint (§7.2); all in one small partition: every device gets every notification. */
  pushSubscription: (endpointHash: string) => ({ pk: 'PUSH', sk: `SUB#${endpointHash}` }),
  pushSubscriptions: { pk: 'PUSH', skPrefix: 'SUB#' },
  /** Written before an event's notification is sent, so a redelivered stream record sends nothing. */
  pushSent: (eventId: string) => ({ pk: `PUSHSENT#${eventId}`, sk: 'SENT' }),

  tag: (name: string) => ({ pk: 'TAGS', sk: `TAG#${asciiLower(name)}#${name}` }),
  tagsWithPrefix: (prefix: string) => ({ pk: 'TAGS', skPrefix: `TAG#${asciiLower(prefix)}` }),
  /** Catalog adjustments of one chat write that did not fit in its transaction, applied right after it. */
  catalogPart: (changeId: string, n: number) => ({ pk: `TAGCHG#${changeId}`, sk: `PART#${pad(n)}` }),
  /** Marks a catalog part in gsi3 until it is applied, by when it was written, so the sweeper finds stranded ones. */
  catalogPartPending: (at: string, changeId: string, n: number) => ({
    gsi3pk: 'TAGS#PENDING',
    gsi3sk: `${at}#${changeId}#${pad(n)}`,
  }),
  catalogPartsPendingIndex: { index: 'gsi3', pkName: 'gsi3pk', pk: 'TAGS#PENDING' },

  eventSequence: { pk: 'SEQ', sk: 'EVENTS' },
  event: (seq: number) => ({ pk: `EVT#${Math.floor(seq / EVENT_BUCKET_SIZE)}`, sk: pad(seq) }),
  /** Every event partition, as an IAM StringLike pattern (the SSE function may void holes there). */
  eventsPattern: 'EVT#*',
  /**
   * Every attribute of a voided event number (store/events-repo.ts voidNumber): the SSE function's
   * grant lets it put items of these names only (lib/constructs/event-stream.ts).
   */
  voidAttributes: ['pk', 'sk', 'type', 'seq', 'void', 'ttl'] as const,
  /** Ephemeral events (typing, chunks): no sequence, time-bucketed, short TTL (§6.1). */
  ephemeralEvent: (timeMs: number, eventId: string) => ({
    pk: `EPH#${Math.floor(timeMs / EPHEMERAL_BUCKET_MS)}`,
    sk: `${pad(timeMs)}#${eventId}`,
  }),
  /** The time in an ephemeral event's sort key. */
  ephemeralEventTime: (sk: string) => Number(sk.slice(0, sk.indexOf('#'))),

  idempotency: (keyHash: string) => ({ pk: `IDEM#${keyHash}`, sk: 'IDEM' }),
  rateLimit: (client: string) => ({ pk: `RL#${client}`, sk: 'RL' }),
  /** Failed sign-ins of one client (POST /auth/session), a window counter like rateLimit's. */
  signInFailures: (client: string) => ({ pk: `RL#${client}`, sk: 'SIGNIN' }),
  setting: (name: string) => ({ pk: 'SETTINGS', sk: name }),
  /**
   * A browser session (core/sessions.ts, contract §1.11.1): present while the session may be used.
   * All in one small partition, so "sign out everywhere" finds every one with a Query, and IAM
   * can name it (the functions that check auth may read and renew a session, nothing else).
   */
  session: (sessionId: string) => ({ pk: 'SESSIONS', sk: `SESSION#${sessionId}` }),
  sessions: { pk: 'SESSIONS', skPrefix: 'SESSION#' },
  /**
   * A secret the service keeps (store/secrets-repo.ts), in a partition of its own: IAM keys on the
   * partition (dynamodb:LeadingKeys), so the stack denies each SECRET# partition to the functions
   * that do not use it (lib/constructs/api-function.ts). Never given index attributes:
   * a query on an index is authorized on the index's partition key, which would not be SECRET#.
   */
  generatedSecret: (name: GeneratedSecretName) => ({ pk: `${SECRET_PREFIX}${name}`, sk: 'SECRET' }),
  /** Every generated secret's partition, as an IAM StringLike pattern. */
  generatedSecretsPattern: `${SECRET_PREFIX}*`,
  /** Taken before an event's first delivery attempt to a hook, so a redelivered record sends nothing. */
  hookClaim: (eventId: string, hookId: string) => ({ pk: `HOOK#${eventId}`, sk: `CLAIM#${hookId}` }),
  hookAttempt: (eventId: string, hookId: string, n: number) => ({
    pk: `HOOK#${eventId}`,
    sk: `TRY#${hookId}#${pad(n)}`,
  }),
  hookAttemptsOf: (eventId: string) => ({ pk: `HOOK#${eventId}`, skPrefix: 'TRY#' }),
  /** The list of the search index's segment files (functions/core/search.ts), versioned. */
  searchManifest: { pk: 'SEARCH', sk: 'MANIFEST' },
  /** The last event the local runtime's index tail handed to the writer. */
  searchTailPosition: { pk: 'SEARCH', sk: 'TAIL' },
  /** A segment a merge replaced, deleted after a grace period (readers may still be reading it). */
  searchRetired: (retiredMs: number, key: string) => ({ pk: 'SEARCH#RETIRED', sk: `${pad(retiredMs)}#${key}` }),
  searchRetiredBefore: (ms: number) => ({ pk: 'SEARCH#RETIRED', skBefore: pad(ms) }),
} as const;
