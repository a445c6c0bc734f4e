/**
 * local/dynamo.ts's start-up check: a DynamoDB Local that finds its port taken is no DynamoDB
 * Local that answers there. Another one on that port answers the start-up probe at once, while
 * the new JVM takes a second or more to fail its bind: the start must wait for its own server
 * to say it listens, and report the taken port, not hand back the other one's endpoint.
 */
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
});
