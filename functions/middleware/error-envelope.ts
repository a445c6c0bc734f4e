/**
 * One error envelope for every failure (contract §1.7). Registered last, so its onError
 * runs first and the other middlewares (idempotency release, CORS) see the final response.
 * Unknown errors are logged with the request id and answered as a bare 500.
 */
import { AppError } from '../errors.js';
import { logger } from '../platform/logger.js';
import type { HttpMiddleware, HttpResult } from './types.js';
import { jsonResult } from './types.js';

/** The response for a failure: its own envelope for an AppError, else a logged, bare 500. */
export function errorResult(error: unknown): HttpResult {
  if (error instanceof AppError) {
    return jsonResult(
      error.status,
      { error: { code: error.code, message: error.message, details: error.details ?? null } },
      error.headers,
    );
  }
  logger.error('unhandled error', { error });
  return jsonResult(500, { error: { code: 'INTERNAL_ERROR', message: 'Unexpected server error.', details: null } });
}

export function errorEnvelope(): HttpMiddleware {
  return {
    onError: (request) => {
      request.response = errorResult(request.error);
    },
  };
}
