/**
 * PATCH /config/admin against concurrent changes (core/instance-config.ts updateAdminConfig): a
 * write that loses the version condition reads and merges again, 21 tries at most. The stored
 * document's repository is replaced to inject the lost writes; the rest is the real module.
 */
import { afterAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { StoredConfig } from '../../functions/store/config-repo.js';

let stored: StoredConfig | undefined;
let lostWrites = 0;
const saves: { document: Record<string, unknown>; previous: number | undefined }[] = [];

jest.unstable_mockModule('../../functions/store/config-repo.js', () => ({
  getStoredConfig: async () => stored,
  saveStoredConfig: async (document: Record<string, unknown>, previous: number | undefined) => {
    saves.push({ document, previous });
    if (lostWrites > 0) {
      // Another admin change came first: the next read finds its version.
      lostWrites--;
      stored = { document: { ...stored?.document, appName: `other ${saves.length}` }, version: (previous ?? 0) + 1 };
      return false;
    }
    stored = { document, version: (previous ?? 0) + 1 };
    return true;
  },
}));

const saved = process.env;
process.env = { TABLE_NAME: 'unit', CONFIG_CACHE_MS: '60000' };
const { reloadEnvForTests } = await import('../../functions/platform/env.js');
reloadEnvForTests();
const { forgetConfigCacheForTests, getConfig, updateAdminConfig } =
  await import('../../functions/core/instance-config.js');

afterAll(() => {
  process.env = saved;
  reloadEnvForTests();
});

beforeEach(() => {
  stored = undefined;
  saves.length = 0;
  forgetConfigCacheForTests();
});

describe('updateAdminConfig under concurrent changes', () => {
  it('merges again onto the winner’s document until its own write lands', async () => {
    lostWrites = 2;
    await expect(updateAdminConfig({ security: { readEndpointsRequireInstanceSecret: true } })).resolves.toEqual({
      ok: true,
    });
    expect(saves.map((s) => s.previous)).toEqual([undefined, 1, 2]);
    // The last try merged onto the other change's document, so neither is lost.
    expect(saves[2]!.document).toMatchObject({
      appName: 'other 2',
      security: { readEndpointsRequireInstanceSecret: true },
    });
    // This instance sees its own change at once, without reading the store again.
    stored = undefined;
    expect((await getConfig()).security.readEndpointsRequireInstanceSecret).toBe(true);
  });

  it('gives up after 21 tries', async () => {
    lostWrites = Infinity;
    await expect(
      updateAdminConfig({ autoRename: { enabled: false, provider: 'openai', modelId: 'x' } }),
    ).rejects.toThrow('PATCH /config/admin: too many concurrent configuration changes');
    expect(saves).toHaveLength(21);
  });
});
