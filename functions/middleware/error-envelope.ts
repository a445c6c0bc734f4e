/**
 * One error envelope for every failure (contract §1.7). Registered last, so its onError
 * runs first and the other middlewares (idempotency release, CORS) see the final response.
 * Unknown errors are logged with the request id and answered as a bare 500.
 */
import { AppError } from '../errors.js';
import { logger } from '../platform/logger.js';
import type { HttpMiddleware } from './types.js';
import { jsonResult } from './types.js';

export function errorEnvelope(): HttpMiddleware {
  return {
    onError: (request) => {
      const error = request.error;
      if (error instanceof AppError) {
        request.response = jsonResult(
          error.status,
          { error: { code: error.code, message: error.message, details: error.details ?? null } },
          error.headers,
        );
        return;
      }
      logger.error('unhandled error', { error });
      request.response = jsonResult(500, {
        error: { code: 'INTERNAL_ERROR', message: 'Unexpected server error.', details: null },
      });
    },
  };
}
