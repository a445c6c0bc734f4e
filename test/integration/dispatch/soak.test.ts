/**
 * Dispatch soak (issue 10): 200 batches over 40 chats (sequential mode, one batch per user
 * message) against the runtime as `npm start` runs it (queues with a data folder), worked by
 * 4 workers (two on claim-many, two on claim) that, by a seeded draw, complete a batch
 * (heartbeating first on even attempts), fail it retryably without a delay, fail it for good,
 * or stop heartbeating and drop it (its lease runs out and it comes back). Afterwards: every
 * input ended in exactly one completed or terminally failed batch, each batch's attempt count
 * equals the claims that returned it, every terminal failure wrote its system message with
 * that count, each chat's batches were leased in order and only after the previous one ended,
 * and no response was a 5xx.
 */
import { describe, expect, it } from '@jest/globals';
import { getBatch } from '../../../functions/store/dispatch/batches.js';
import { configWith, dispatchApi } from './support.js';
import type { Action } from './workers.js';
import { newLedger, pump, seeded, serverErrors, until } from './workers.js';

const MAX_ATTEMPTS = 4;
const config = configWith({ mode: 'sequential', retryBaseMs: 200, retryMaxMs: 1000, maxAttempts: MAX_ATTEMPTS });
const { api, d } = dispatchApi(config, { drainAfterEach: false });

const CHATS = 40;
/**
 * Short, so dropped batches come back soon. On a busy 2-core machine (this process serves the
 * API and runs the workers) a request can take seconds, so a worker may still find its lease
 * lost (409): the batch then comes back as its next attempt, which the checks below count.
 */
const LEASE_MS = 5000;
const PER_CHAT = 5;

describe('dispatch soak', () => {
  it(
    `${CHATS * PER_CHAT} batches over ${CHATS} chats, 4 workers completing, failing (retryably and for good) and ` +
      `abandoning at random`,
    async () => {
      const started = Date.now();
      const ledger = newLedger();
      const random = seeded(10);
      const actions: Record<Action, number> = { complete: 0, retry: 0, terminal: 0, abandon: 0 };
      const decide = (_batch: unknown, attempt: number): Action => {
        const r = random();
        // Keep it finite: a batch seen six times completes.
        const action: Action =
          attempt >= 6 || r < 0.5 ? 'complete' : r < 0.7 ? 'retry' : r < 0.8 ? 'terminal' : 'abandon';
        actions[action]++;
        return action;
      };
      let stop = false;
      const workers = [
        { workerId: 'soak-1', limit: 5 },
        { workerId: 'soak-2', limit: 5 },
        { workerId: 'soak-3' },
        { workerId: 'soak-4' },
      ].map((w) =>
        pump(d, ledger, {
          ...w,
          waitMs: 2000,
          leaseMs: LEASE_MS,
          idlePauseMs: 50,
          maxAttempts: MAX_ATTEMPTS,
          decide,
          stopped: () => stop,
        }),
      );

      const chats = await Promise.all(Array.from({ length: CHATS }, () => d.newChat()));
      const sent = new Map<string, string[]>(chats.map((c) => [c.id as string, []]));
      for (let round = 0; round < PER_CHAT; round++) {
        await Promise.all(
          chats.map(async (c) => sent.get(c.id)!.push(await d.say(c.id, `message ${round} of ${c.id}`))),
        );
      }
      const all = [...sent.values()].flat();
      const endedInputs = () =>
        [...ledger.ends.keys()].flatMap((id) => ledger.claims.get(id)![0]!.items.map((i) => i.sourceId));
      const finished = await until(() => endedInputs().length >= all.length, 150_000);
      stop = true;
      await Promise.all(workers);
      const seconds = (Date.now() - started) / 1000;

      const errors = serverErrors(ledger);
      const attempts = [...ledger.claims.values()].reduce((n, c) => n + c.length, 0);
      process.stdout.write(
        `dispatch soak: ${ledger.claims.size} batches, ${attempts} attempts, actions ${JSON.stringify(actions)}, ` +
          `${ledger.lost.length} leases lost, ${ledger.statuses.length} worker requests, ${errors.length} 5xx, ` +
          `${seconds.toFixed(1)} s\n`,
      );
      expect(errors).toEqual([]);
      expect(finished).toBe(true);

      // Every input in exactly one batch, every batch ended exactly once, as the table says.
      const batchesOf = new Map<string, Set<string>>();
      for (const [batchId, claims] of ledger.claims) {
        for (const c of claims) {
          expect(c).toEqual(claims[0]); // the frozen payload never changes between attempts
          for (const item of c.items)
            batchesOf.set(item.sourceId, (batchesOf.get(item.sourceId) ?? new Set()).add(batchId));
        }
      }
      expect([...batchesOf.keys()].sort()).toEqual([...all].sort());
      expect([...batchesOf.values()].filter((s) => s.size !== 1)).toEqual([]);
      expect(ledger.claims.size).toBe(CHATS * PER_CHAT);
      const failedPerChat = new Map<string, number[]>();
      for (const [batchId, claims] of ledger.claims) {
        const ends = ledger.ends.get(batchId) ?? [];
        expect([batchId, ends.length]).toEqual([batchId, 1]);
        const header = (await getBatch(batchId))!;
        // Attempts are exact: one per claim that returned the batch.
        expect([batchId, header.status, header.attempt_count]).toEqual([batchId, ends[0], claims.length]);
        if (ends[0] === 'failed')
          failedPerChat.set(header.chat_id, [...(failedPerChat.get(header.chat_id) ?? []), claims.length]);
      }

      for (const [chatId, ids] of sent) {
        // Terminal failures wrote their system message, with the attempt count.
        const messages = (await api.get(`/api/v1/chats/${chatId}/messages?limit=100`)).body.data as {
          role: string;
          content_final: string;
        }[];
        const systemAttempts = messages
          .filter((m) => m.role === 'system')
          .map((m) => Number(/after (\d+) attempts/.exec(m.content_final)?.[1]));
        expect([chatId, systemAttempts.sort()]).toEqual([chatId, (failedPerChat.get(chatId) ?? []).sort()]);
        // Order: the chat's batches carry its messages in order, each leased after the previous ended.
        const headers = await Promise.all(
          [...ledger.claims.entries()]
            .filter(([, c]) => c[0]!.chatId === chatId)
            .map(async ([id]) => (await getBatch(id))!),
        );
        headers.sort((a, b) => a.chat_seq - b.chat_seq);
        expect([chatId, headers.flatMap((h) => ledger.claims.get(h.id)![0]!.items.map((i) => i.sourceId))]).toEqual([
          chatId,
          ids,
        ]);
        for (let k = 1; k < headers.length; k++) {
          expect([chatId, k, headers[k]!.started_at! >= headers[k - 1]!.completed_at!]).toEqual([chatId, k, true]);
        }
      }
    },
    240_000,
  );
});
