/** First in the chain: the request id, the logger's keys and the live configuration. */
import { getConfig } from '../platform/config.js';
import { logger } from '../platform/logger.js';
import type { HttpMiddleware } from './types.js';
import { stateOf } from './types.js';

export function requestContext(): HttpMiddleware {
  return {
    before: async (request) => {
      const state = stateOf(request);
      state.requestId = request.event.requestContext?.requestId || request.context.awsRequestId;
      logger.resetKeys();
      logger.appendKeys({
        requestId: state.requestId,
        route: request.event.routeKey,
        method: request.event.requestContext?.http?.method,
        path: request.event.rawPath,
      });
      state.config = await getConfig();
    },
  };
}
