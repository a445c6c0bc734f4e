/**
 * First in the chain after Powertools' `injectLambdaContext` (which resets the logger's keys
 * when the request ends): the request id, the logger's keys and the live configuration before
 * anything else runs, and the one `request` line when the answer is settled (status, duration,
 * DynamoDB usage), with the usage headers when EXPOSE_USAGE_HEADERS is set (the benchmark).
 */
import { getConfig, lastKnownConfig } from '../core/instance-config.js';
import { env } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { currentUsage } from '../platform/usage.js';
import type { HttpMiddleware, HttpRequest } from './types.js';
import { stateOf } from './types.js';

/** Requests in this process's middleware chains now (counted only with the usage headers on). */
let inFlight = 0;

/**
 * This request's CPU time, roughly: the process's CPU (user + system) since the request began,
 * divided by the mean number of requests in flight at its start and at its end (itself
 * included). Exact for a request alone in the process (Lambda's case, and the bench's
 * sequential runs); an estimate when the local runtime serves several at once.
 */
const cpuMsSince = (start: NodeJS.CpuUsage | undefined, inFlightAtStart: number | undefined): string => {
  if (!start) return '0';
  const used = process.cpuUsage(start);
  const sharing = Math.max(1, ((inFlightAtStart ?? 1) + inFlight) / 2);
  return ((used.user + used.system) / 1000 / sharing).toFixed(2);
};

function finish(request: HttpRequest): void {
  const response = request.response;
  const usage = currentUsage();
  const { started, startedPerf, startedCpu, inFlightAtStart } = stateOf(request);
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
      // The request's CPU time (see cpuMsSince): the cost model scales it by Lambda memory.
      'x-cpu-ms': cpuMsSince(startedCpu, inFlightAtStart),
    };
  }
  if (startedCpu) {
    inFlight -= 1;
    stateOf(request).startedCpu = undefined;
  }
}

/**
 * `routeKey`: the route's "METHOD /path" (the event's own routeKey where the table has none).
 * `storage: false`: the route makes no storage call, so its configuration is the one this
 * container already knows (lastKnownConfig), never a read of the table.
 */
export function requestContext(routeKey: string | undefined, storage = true): HttpMiddleware {
  return {
    before: async (request) => {
      const state = stateOf(request);
      state.started = Date.now();
      state.startedPerf = performance.now();
      if (env().EXPOSE_USAGE_HEADERS === '1') {
        inFlight += 1;
        state.inFlightAtStart = inFlight;
        state.startedCpu = process.cpuUsage();
      }
      state.requestId = request.event.requestContext?.requestId || request.context.awsRequestId;
      logger.appendKeys({
        requestId: state.requestId,
        route: routeKey ?? request.event.routeKey,
        method: request.event.requestContext?.http?.method,
        path: request.event.rawPath,
      });
      state.config = storage ? await getConfig() : await lastKnownConfig();
    },
    after: finish,
    onError: finish,
  };
}
