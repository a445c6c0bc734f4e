/**
 * A batch's payload (contract §4.4.8): items and attachments compiled from the sealed inputs,
 * cut into stored parts, and the compiledContent text a worker receives.
 */
import type { BatchRecord } from '../../store/dispatch/batches.js';
import type { DispatchInput } from '../../store/dispatch/inputs.js';
import type { BatchAttachment, BatchItem, BatchPayload } from '../../store/dispatch/payloads.js';
import { getMedia } from '../../store/media-repo.js';
import { PART_MAX_BYTES } from './limits.js';

/** Builds items, attachments and compiledContent from inputs, looking media up in the chat. */
export async function compile(
  chatId: string,
  inputs: DispatchInput[],
): Promise<BatchPayload & Pick<BatchRecord, 'kind'>> {
  const media = await getMedia(inputs.flatMap((i) => i.media_ids));
  const attachments: BatchAttachment[] = [];
  const items: BatchItem[] = inputs.map((input, index) => {
    const attachmentNames: string[] = [];
    for (const mediaId of input.media_ids) {
      const m = media.get(mediaId);
      if (!m || m.chat_id !== chatId) continue;
      attachmentNames.push(m.filename);
      attachments.push({ mediaId, fileName: m.filename, kind: m.kind, sourceInputId: input.id, sourceIndex: index });
    }
    return {
      inputId: input.id,
      sourceKind: input.source_kind,
      sourceId: input.source_id,
      senderId: input.sender_id,
      content: input.content,
      ...(input.source_kind === 'user_message' && input.trace_kind !== undefined
        ? { traceKind: input.trace_kind }
        : {}),
      mediaIds: input.source_kind === 'user_message' ? input.media_ids : [],
      attachmentNames,
    };
  });
  return {
    items,
    attachments,
    kind: items.every((i) => i.sourceKind === 'request_resolved') ? 'request_batch' : 'user_batch',
  };
}

const textOr = (content: string) => (content.trim() === '' ? '(no text)' : content);

export function compiledContent(items: Pick<BatchItem, 'content' | 'attachmentNames'>[]): string {
  if (items.length === 0) return '';
  if (items.length === 1) return textOr(items[0]!.content);
  return items
    .map((item, i) => {
      const lines = [`[Message ${i + 1}]`];
      if (item.attachmentNames.length > 0) lines.push(`[attachments: ${JSON.stringify(item.attachmentNames)}]`);
      lines.push(textOr(item.content));
      return lines.join('\n');
    })
    .join('\n\n');
}

export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Cuts a payload into parts under PART_MAX_BYTES each (an item never spans two parts). */
export function splitParts(items: BatchItem[], attachments: BatchAttachment[]): BatchPayload[] {
  const parts: BatchPayload[] = [];
  let current: BatchPayload = { items: [], attachments: [] };
  let bytes = 0;
  items.forEach((item, index) => {
    const own = attachments.filter((a) => a.sourceIndex === index);
    const size = jsonBytes(item) + jsonBytes(own);
    if (current.items.length > 0 && bytes + size > PART_MAX_BYTES) {
      parts.push(current);
      current = { items: [], attachments: [] };
      bytes = 0;
    }
    current.items.push(item);
    current.attachments.push(...own);
    bytes += size;
  });
  parts.push(current);
  return parts;
}
