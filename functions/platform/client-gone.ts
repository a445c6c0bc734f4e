/**
 * Whether the HTTP client is still there. Behind API Gateway a function cannot tell (the
 * gateway keeps the integration running when its client disconnects), so in AWS this is
 * always undefined. The local runtime attaches a signal to the invocation context that aborts
 * when the client's connection closes before the answer; long waits (dispatch claims, §4.4.7)
 * check it so an abandoned claim leases nothing.
 */
import type { Context } from 'aws-lambda';

export const CLIENT_GONE = Symbol.for('chat-relay.client-gone');

export type ContextWithClient = Context & { [CLIENT_GONE]?: AbortSignal };

export const clientGoneSignal = (context: Context | undefined): AbortSignal | undefined =>
  (context as ContextWithClient | undefined)?.[CLIENT_GONE];
