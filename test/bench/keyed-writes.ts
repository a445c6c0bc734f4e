/**
 * `npx tsx test/bench/keyed-writes.ts`: per write route, what a request costs with and without
 * an Idempotency-Key (DynamoDB calls, sequential storage round trips, Local's WCU), from the
 * usage headers of the in-process local runtime. Warm function, 20 requests each, means.
 */
import { startDynamo } from '../../local/dynamo.js';
import { ensureTable } from '../../local/table.js';
import { startBenchApi } from './local-api.js';
import { textTable } from './stats.js';

const N = 20;

async function main(): Promise<void> {
  const dynamo = await startDynamo();
  await ensureTable(dynamo.endpoint, 'keyed-writes');
  const local = await startBenchApi(dynamo.endpoint, 'keyed-writes', {
    config: {
      agents: [{ id: 'assistant', name: 'A', description: '' }],
      models: [{ id: 'm', name: 'M', description: '' }],
    },
  });
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${local.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
  };
  const api = { post, close: () => local.close() };
  const rows: string[][] = [];
  try {
    const chat = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
    const choice = { type: 'choice', title: 'Go?', config: { options: [{ id: 'yes', label: 'Yes' }] } };
    const cases: [string, () => Promise<[string, unknown]>][] = [
      ['POST chats', async () => ['/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }]],
      [
        'POST messages (agent)',
        async () => [`/api/v1/chats/${chat.id}/messages`, { role: 'agent', senderId: 'assistant', content: 'hi' }],
      ],
      ['POST requests', async () => [`/api/v1/chats/${chat.id}/requests`, choice]],
      [
        'POST resolve',
        async () => {
          const req = (await api.post(`/api/v1/chats/${chat.id}/requests`, choice)).body;
          return [`/api/v1/requests/${req.id}/resolve`, { selectedOptionIds: ['yes'] }];
        },
      ],
      ['POST mark-read', async () => [`/api/v1/chats/${chat.id}/mark-read`, undefined]],
    ];
    // Warm every route once.
    for (const [, make] of cases) {
      const [path, body] = await make();
      await api.post(path, body);
    }
    let n = 0;
    for (const [label, make] of cases) {
      for (const keyed of [false, true]) {
        let calls = 0;
        let trips = 0;
        let wcu = 0;
        for (let i = 0; i < N; i++) {
          const [path, body] = await make();
          const res = await api.post(path, body, keyed ? { 'idempotency-key': `k-${n++}` } : {});
          if (res.status >= 300) throw new Error(`${label}: ${res.status} ${res.text}`);
          calls += Number(res.headers.get('x-ddb-calls'));
          trips += Number(res.headers.get('x-storage-trips'));
          wcu += Number(res.headers.get('x-ddb-wcu'));
        }
        rows.push([
          `${label}${keyed ? ' + key' : ''}`,
          (calls / N).toFixed(2),
          (trips / N).toFixed(2),
          (wcu / N).toFixed(2),
        ]);
      }
    }
  } finally {
    await api.close();
    dynamo.process.kill('SIGKILL');
  }
  console.log(textTable(['request', 'calls', 'trips', 'WCU (Local)'], rows));
}

await main();
process.exit(0);
