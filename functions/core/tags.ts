/** Tag suggestions (contract §5.8): prefix match on the catalog, usage desc then name asc. */
import { tagsWithPrefix } from '../store/tags-repo.js';
import type { TagEntry } from '../store/tags-repo.js';
import { asciiLower } from '../store/keys.js';

export async function suggest(q: string | undefined, limit: number): Promise<TagEntry[]> {
  const prefix = q?.trim() ?? '';
  if (prefix === '') return [];
  const wanted = asciiLower(prefix);
  // The key range can also match a longer prefix that runs into the key's separator; check exactly.
  const entries = (await tagsWithPrefix(prefix)).filter((e) => asciiLower(e.name).startsWith(wanted));
  entries.sort((a, b) => b.usage_count - a.usage_count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return entries.slice(0, limit);
}
