/**
 * The only place key values are spelled. The table has generic attributes (pk, sk,
 * gsiNpk/gsiNsk, see lib/table-schema.ts); meaning lives here.
 *
 * | entity            | pk                 | sk                          | indexes
 * |-------------------|--------------------|-----------------------------|------------------------------
 * | chat              | CHAT#<chatId>      | CHAT                        | gsi1 (all, list order), gsi2 (by archived state), gsi3 (sparse: needs attention)
 * | message           | CHAT#<chatId>      | MSG#<createdMs>#<messageId> |
 * | message pointer   | MSG#<messageId>    | PTR                         |
 * | dispatch input    | CHAT#<chatId>      | DIN#<createdMs>#<inputId>   |
 * | tag catalog entry | TAGS               | TAG#<ascii-lower name>#<name> |
 * | event sequence    | SEQ                | EVENTS                      |
 * | event             | EVT#<seq / 100000> | <seq, 15 digits>            |
 * | idempotency       | IDEM#<sha256(key)> | IDEM                        |
 * | rate-limit window | RL#<client>        | RL                          |
 * | setting           | SETTINGS           | <name>                      |
 */

/** Zero-padded so that string order is numeric order. 15 digits hold any epoch-ms or sequence. */
export const pad = (n: number): string => Math.trunc(n).toString().padStart(15, '0');

/** ASCII-only lowercase: tag prefix matching is case-insensitive for ASCII letters only. */
export const asciiLower = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

export const EVENT_BUCKET_SIZE = 100_000;

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
  attentionIndex: { index: 'gsi3', pkName: 'gsi3pk', pk: 'ATTENTION' },

  message: (chatId: string, createdAt: string, messageId: string) => ({
    pk: `CHAT#${chatId}`,
    sk: `MSG#${pad(Date.parse(createdAt))}#${messageId}`,
  }),
  messagesOf: (chatId: string) => ({ pk: `CHAT#${chatId}`, skPrefix: 'MSG#' }),
  /** Lower bound (exclusive) for messages created after `time`. */
  messagesAfter: (chatId: string, time: string) => ({ pk: `CHAT#${chatId}`, skAfter: `MSG#${pad(Date.parse(time))}#~` }),
  messagePointer: (messageId: string) => ({ pk: `MSG#${messageId}`, sk: 'PTR' }),

  dispatchInput: (chatId: string, createdAt: string, inputId: string) => ({
    pk: `CHAT#${chatId}`,
    sk: `DIN#${pad(Date.parse(createdAt))}#${inputId}`,
  }),

  tag: (name: string) => ({ pk: 'TAGS', sk: `TAG#${asciiLower(name)}#${name}` }),
  tagsWithPrefix: (prefix: string) => ({ pk: 'TAGS', skPrefix: `TAG#${asciiLower(prefix)}` }),

  eventSequence: { pk: 'SEQ', sk: 'EVENTS' },
  event: (seq: number) => ({ pk: `EVT#${Math.floor(seq / EVENT_BUCKET_SIZE)}`, sk: pad(seq) }),

  idempotency: (keyHash: string) => ({ pk: `IDEM#${keyHash}`, sk: 'IDEM' }),
  rateLimit: (client: string) => ({ pk: `RL#${client}`, sk: 'RL' }),
  setting: (name: string) => ({ pk: 'SETTINGS', sk: name }),
} as const;
