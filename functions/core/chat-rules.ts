/**
 * The rules chat creation and chat changes share (§2.1, §5.3.1, §5.3.4): tag normalization
 * and its storage bounds, the configured model, the title.
 */
import { FieldRuleError } from '../errors.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { cut } from '../model.js';

/**
 * Bounds far above real use, set by storage: a tag is part of a catalog key (at most 1 KB),
 * hence its size cap; the tags live in the chat item (at most 400 KB, and every message
 * write rewrites it), hence the total; and a PATCH replacing 1,000 tags by 1,000 others
 * makes 2,000 catalog adjustments, about 20 catalog parts, which its transaction still holds.
 */
export const MAX_TAGS = 1000;
export const MAX_TAG_BYTES = 400;
export const MAX_TAGS_TOTAL_BYTES = 100_000;

/** Trimmed, empty dropped, duplicates removed keeping the first occurrence (§2.1). */
export function normalizeTags(tags: readonly string[]): string[] {
  const out = [...new Set(tags.map((t) => t.trim()).filter((t) => t !== ''))];
  if (out.length > MAX_TAGS) throw new FieldRuleError('tags', `tags must contain at most ${MAX_TAGS} distinct tags.`);
  const sizes = out.map((t) => Buffer.byteLength(t, 'utf8'));
  if (sizes.some((n) => n > MAX_TAG_BYTES))
    throw new FieldRuleError('tags', `Each tag must be at most ${MAX_TAG_BYTES} bytes.`);
  if (sizes.reduce((a, b) => a + b, 0) > MAX_TAGS_TOTAL_BYTES) {
    throw new FieldRuleError('tags', `tags must total at most ${MAX_TAGS_TOTAL_BYTES} bytes.`);
  }
  return out;
}

export function checkModel(config: InstanceConfig, modelId: string): void {
  if (!config.models.some((m) => m.id === modelId)) {
    throw new FieldRuleError('modelId', 'modelId must match a configured model id.');
  }
}

export function checkTitle(title: string, config: InstanceConfig): string {
  const trimmed = title.trim();
  if (trimmed === '') throw new FieldRuleError('title', 'title cannot be empty.');
  return cut(trimmed, config.titleMaxChars);
}
