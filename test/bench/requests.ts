/**
 * The benchmark's interactive-request workload (contract §5.5), on chats of its own: requests
 * of all three types created, listed, updated, resolved and cancelled, `concurrency` chats at
 * once, with the chats' pending summary read in between. The per-endpoint table reports each
 * call's latency, DynamoDB calls and capacity; a resolve also writes its dispatch input.
 */
import { BENCH_CONFIG, BenchClient, CHATS, inPool, phaseRunner } from './scenario.js';
import type { Failure, PhaseTiming } from './scenario.js';
import type { Sample } from './stats.js';

const REQUESTS = '/api/v1/requests';
const CHAT_COUNT = 20;
const PER_CHAT = 6;

export const REQUEST_LABELS = {
  chatCreate: `POST ${CHATS} (for requests)`,
  create: `POST ${CHATS}/{chatId}/requests`,
  list: `GET ${CHATS}/{chatId}/requests?status=all`,
  patch: `PATCH ${REQUESTS}/{requestId}`,
  resolve: `POST ${REQUESTS}/{requestId}/resolve`,
  cancel: `POST ${REQUESTS}/{requestId}/cancel`,
  pendingSummary: `GET ${CHATS}/pending-summary (requests)`,
  approvalsChat: `POST ${CHATS} (for approvals)`,
  approvalsCreate: `POST ${CHATS}/{chatId}/requests (approvals: 1,000 pending)`,
  approvalsFirst: `GET ${REQUESTS}?status=pending (first page of 50, 1,000 pending in 200 chats)`,
  approvalsPage: `GET ${REQUESTS}?status=pending&limit=200 (each page of the whole list)`,
  decisions: 'GET /api/v1/decisions?limit=500',
} as const;

/** The approvals list's size (issue 36 budget): pending requests across chats, half with deadlines. */
const APPROVAL_CHATS = 200;
const APPROVALS_PER_CHAT = 5;
/** Reads of the first page: its p50 is the budget's figure. */
const FIRST_PAGE_READS = 20;

export interface RequestScenarioResult {
  samples: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
}

/** A request of each type in turn, with its resolution. */
const KINDS = [
  {
    body: {
      type: 'choice',
      title: 'Pick a plan',
      config: {
        options: [
          { id: 'a', label: 'A' },
          { id: 'b', label: 'B' },
        ],
      },
    },
    resolution: { selectedOptionIds: ['b'] },
  },
  {
    body: { type: 'text_input', title: 'Name the file', config: { validation: { maxLength: 80 } } },
    resolution: { text: 'report.md' },
  },
  {
    body: {
      type: 'form',
      title: 'Deploy settings',
      config: { fields: [{ name: 'region', type: 'text', required: true }] },
    },
    resolution: { values: { region: 'eu-west-1' } },
  },
] as const;

export async function runRequestScenarios(
  baseUrl: string,
  options: { concurrency: number },
  log: (line: string) => void,
): Promise<RequestScenarioResult> {
  const client = new BenchClient(baseUrl);
  const phases: PhaseTiming[] = [];
  const phase = phaseRunner([client], phases, log);
  const L = REQUEST_LABELS;
  const agentId = BENCH_CONFIG.agents[0]!.id;
  const chats: string[] = [];

  await phase('request chats', async () => {
    await inPool([...Array(CHAT_COUNT).keys()], options.concurrency, async (i) => {
      const body = { agentIds: [agentId], modelId: BENCH_CONFIG.models[0]!.id, title: `requests bench ${i}` };
      const { body: chat } = await client.request<{ id: string }>(L.chatCreate, 'POST', CHATS, { body, expect: 201 });
      if (chat?.id) chats.push(chat.id);
    });
  });

  const created: { id: string; kind: number }[][] = chats.map(() => []);
  await phase('requests: create', async () => {
    await inPool(chats, options.concurrency, async (chatId, c) => {
      for (let i = 0; i < PER_CHAT; i++) {
        const kind = i % KINDS.length;
        const { body } = await client.request<{ id: string }>(L.create, 'POST', `${CHATS}/${chatId}/requests`, {
          body: KINDS[kind]!.body,
          expect: 201,
        });
        if (body?.id) created[c]!.push({ id: body.id, kind });
      }
    });
  });

  await phase('requests: list, patch, summary', async () => {
    await inPool(chats, options.concurrency, async (chatId, c) => {
      await client.request(L.list, 'GET', `${CHATS}/${chatId}/requests?status=all`, { expect: 200 });
      const first = created[c]![0];
      if (first)
        await client.request(L.patch, 'PATCH', `${REQUESTS}/${first.id}`, {
          body: { title: 'Pick a plan, please' },
          expect: 200,
        });
      await client.request(L.pendingSummary, 'GET', `${CHATS}/pending-summary`, { expect: 200 });
    });
  });

  await phase('requests: resolve and cancel', async () => {
    await inPool(chats, options.concurrency, async (_chatId, c) => {
      for (const [i, request] of created[c]!.entries()) {
        if (i % 3 === 2) {
          await client.request(L.cancel, 'POST', `${REQUESTS}/${request.id}/cancel`, { expect: 200 });
        } else {
          await client.request(L.resolve, 'POST', `${REQUESTS}/${request.id}/resolve`, {
            body: KINDS[request.kind]!.resolution,
            expect: 200,
          });
        }
      }
    });
  });

  await phase('approvals: 1,000 pending in 200 chats', async () => {
    const approvalChats: string[] = [];
    await inPool([...Array(APPROVAL_CHATS).keys()], options.concurrency, async (i) => {
      const body = { agentIds: [agentId], modelId: BENCH_CONFIG.models[0]!.id, title: `approvals bench ${i}` };
      const { body: chat } = await client.request<{ id: string }>(L.approvalsChat, 'POST', CHATS, {
        body,
        expect: 201,
      });
      if (chat?.id) approvalChats.push(chat.id);
    });
    await inPool(approvalChats, options.concurrency, async (chatId, c) => {
      for (let i = 0; i < APPROVALS_PER_CHAT; i++) {
        const deadline = (c + i) % 2 === 0 ? { inSeconds: 3600 + c * 10 + i, remindBeforeSeconds: [600] } : undefined;
        await client.request(L.approvalsCreate, 'POST', `${CHATS}/${chatId}/requests`, {
          body: { ...KINDS[0].body, ...(deadline ? { deadline } : {}) },
          expect: 201,
        });
      }
    });
  });

  await phase('approvals: list', async () => {
    for (let i = 0; i < FIRST_PAGE_READS; i++) {
      await client.request(L.approvalsFirst, 'GET', `${REQUESTS}?status=pending`, { expect: 200 });
    }
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const { body } = await client.request<{ cursor: { next: string | null } }>(
        L.approvalsPage,
        'GET',
        `${REQUESTS}?status=pending&limit=200${query}`,
        { expect: 200 },
      );
      cursor = body?.cursor.next ?? null;
    } while (cursor);
    await client.request(L.decisions, 'GET', '/api/v1/decisions?limit=500', { expect: 200 });
  });

  return { samples: client.samples, failures: client.failures, missingUsage: [...client.missingUsage], phases };
}
