import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { Keys } from '../../../functions/store/keys.js';
import { useApi } from '../../support/api.js';

const config = {
  agents: [{ id: 'alpha', name: 'Alpha', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
// A table of its own: no cursor was ever handed out on it.
const fresh = useApi({ config });

describe('cursor on an instance that never issued one', () => {
  it('is a 400 that writes nothing (the signing key is created by the first cursor handed out, not by a check)', async () => {
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: process.env.TEST_DYNAMODB_ENDPOINT,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const key = async () =>
      (
        await db.send(
          new GetCommand({ TableName: fresh.tableName, Key: Keys.generatedSecret('CURSOR'), ConsistentRead: true }),
        )
      ).Item;
    const body = Buffer.from(JSON.stringify({ l: 'chats:all', p: { id: 'x' } })).toString('base64url');
    for (const cursor of ['1.5', `${body}.${randomBytes(16).toString('base64url')}`]) {
      const res = await fresh.get(`/api/v1/chats?cursor=${encodeURIComponent(cursor)}`);
      expect([res.status, res.body.error?.message]).toEqual([400, 'Invalid cursor value.']);
    }
    expect(await key()).toBeUndefined();
    // The first page with a next cursor creates it.
    for (let i = 0; i < 3; i++) await fresh.post('/api/v1/chats', { agentIds: ['alpha'], modelId: 'm' });
    const page = await fresh.get('/api/v1/chats?limit=2');
    expect(page.body.cursor.next).toEqual(expect.any(String));
    expect(await key()).toMatchObject({ pk: 'SECRET#CURSOR' });
    expect((await fresh.get(`/api/v1/chats?cursor=${encodeURIComponent(page.body.cursor.next)}`)).status).toBe(200);
  });
});
