/**
 * What a replayed create redoes after its commit (functions/middleware/http.ts afterReplay):
 * a streaming message's timer starts again (its execution is named for the message, so a second
 * start is harmless); a message that is not streaming starts none. The dispatch signal of a
 * replayed user message, resolution or first message is tested end to end in
 * test/integration/dispatch/recovery.test.ts.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import * as Messages from '../../functions/core/messages.js';
import { NO_DEADLINE } from '../../functions/platform/deadline.js';
import { defaultConfig } from '../../functions/platform/instance-config.js';
import { installStreamTimer } from '../../functions/platform/stream-timer.js';
import type { StreamTimerInput } from '../../functions/platform/stream-timer.js';
import type { Message } from '../../functions/model.js';

afterEach(() => installStreamTimer(undefined));

function recordChecks(): StreamTimerInput[] {
  const checks: StreamTimerInput[] = [];
  installStreamTimer({
    check: async (input) => void checks.push(input),
    loop: async () => {
      throw new Error('a replay never starts the loop itself');
    },
  });
  return checks;
}

describe('Messages.redoAfterCreate', () => {
  it("restarts a streaming message's timer with the configured timeout", async () => {
    const checks = recordChecks();
    const config = { ...defaultConfig(), server: { ...defaultConfig().server, streamTimeoutSeconds: 45 } };
    await Messages.redoAfterCreate(
      config,
      'chat-1',
      {
        id: 'msg-1',
        role: 'agent',
        stream_state: 'streaming',
      } as Message,
      NO_DEADLINE,
    );
    expect(checks).toEqual([{ messageId: 'msg-1', waitSeconds: 45 }]);
  });

  it('starts no timer for a message that is not streaming', async () => {
    const checks = recordChecks();
    await Messages.redoAfterCreate(
      defaultConfig(),
      'chat-1',
      {
        id: 'msg-2',
        role: 'agent',
        stream_state: 'complete',
      } as Message,
      NO_DEADLINE,
    );
    expect(checks).toEqual([]);
  });
});
