/**
 * local/dynamo.ts's start-up check: a DynamoDB Local that finds its port taken is no DynamoDB
 * Local that answers there. Another one on that port answers the start-up probe at once, while
 * the new JVM takes a second or more to fail its bind: the start must wait for its own server
 * to say it listens, and report the taken port, not hand back the other one's endpoint.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { startDynamo } from '../../../local/dynamo.js';

describe('startDynamo', () => {
  it("refuses a port another DynamoDB Local holds, rather than taking the other's answers for its own", async () => {
    // The run's shared DynamoDB Local (test/support/global-setup.mjs) holds this port.
    const port = Number(new URL(process.env.TEST_DYNAMODB_ENDPOINT!).port);
    const outcome = await startDynamo({ port }).then(
      async (dynamo) => {
        await dynamo.stop();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(outcome).toMatch(`port ${port} was taken by another process`);
  });

  it('picks its own port below the ephemeral range, which listens on port 0 and outgoing connections never take', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const dynamo = await startDynamo();
    try {
      const port = Number(new URL(dynamo.endpoint).port);
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
    } finally {
      await dynamo.stop();
    }
  });
});
