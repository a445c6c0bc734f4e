/**
 * First in the chain after Powertools' `injectLambdaContext` (which resets the logger's keys
 * when the request ends): the request id, the logger's keys and the live configuration before
 * anything else runs, and the one `request` line when the answer is settled (status, duration,
 * DynamoDB usage), with the usage headers when EXPOSE_USAGE_HEADERS is set (the benchmark).
 */
import { getConfig } from '../core/live-config.js';
import { env } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { currentUsage } from '../platform/usage.js';
import type { HttpMiddleware, HttpRequest } from './types.js';
import { stateOf } from './types.js';

const cpuMsSince = (start: NodeJS.CpuUsage | undefined): string => {
  if (!start) return '0';
  const used = process.cpuUsage(start);
  return ((used.user + used.system) / 1000).toFixed(2);
};

function finish(request: HttpRequest): void {
  const response = request.response;
  const usage = currentUsage();
  const { started, startedPerf, startedCpu } = stateOf(request);
  logger.info('request', { status: response?.statusCode, ms: Date.now() - started, ddb: usage });
  if (response && usage && env().EXPOSE_USAGE_HEADERS === '1') {
    response.headers = {
      ...response.headers,
      'x-ddb-calls': String(usage.calls),
      'x-ddb-rcu': usage.readUnits.toFixed(2),
      'x-ddb-wcu': usage.writeUnits.toFixed(2),
      // Time inside DynamoDB and SQS calls (overlapping calls once) and the sequential round
      // trips, beside the time the chain took: the bench shows the overhead above the storage floor.
      'x-storage-ms': usage.storageMs.toFixed(2),
      'x-storage-trips': String(usage.trips),
      'x-server-ms': (performance.now() - startedPerf).toFixed(2),
      // The process's CPU time (user + system) meanwhile: this request's own when it was alone in
      // the process (the bench's sequential runs); the cost model scales it by Lambda memory.
      'x-cpu-ms': cpuMsSince(startedCpu),
    };
  }
}

/** `routeKey`: the route's "METHOD /path" (the event's own routeKey where the table has none). */
export function requestContext(routeKey: string | undefined): HttpMiddleware {
  return {
    before: async (request) => {
      const state = stateOf(request);
      state.started = Date.now();
      state.startedPerf = performance.now();
      if (env().EXPOSE_USAGE_HEADERS === '1') state.startedCpu = process.cpuUsage();
      state.requestId = request.event.requestContext?.requestId || request.context.awsRequestId;
      logger.appendKeys({
        requestId: state.requestId,
        route: routeKey ?? request.event.routeKey,
        method: request.event.requestContext?.http?.method,
        path: request.event.rawPath,
      });
      state.config = await getConfig();
    },
    after: finish,
    onError: finish,
  };
}
