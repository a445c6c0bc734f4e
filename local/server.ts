/**
 * The local HTTP adapter: matches each request against the route table, turns it into an
 * API Gateway HTTP API payload-v2 event and calls the very handler Lambda would run.
 * Unmatched requests go to the same catch-all handler as the $default route. With a web app
 * (npm start), paths outside /api are the app's files instead (local/web-app.ts).
 *
 * Here: the emulators and background jobs started around the server, and each request's way
 * through it. The mounted routes and the match are local/routing.ts's, the event and the Lambda
 * context local/lambda-event.ts's, requests Node's parser refuses local/malformed-requests.ts's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CLIENT_GONE } from '../functions/platform/client-gone.js';
import type { ContextWithClient } from '../functions/platform/client-gone.js';
import { env } from '../functions/platform/env.js';
import { sqs as sqsClient } from '../functions/platform/queues.js';
import { s3 as s3Client } from '../functions/platform/s3-client.js';
import { ddb } from '../functions/store/db.js';
import { fallbackHandler, functionTimeoutSeconds } from '../lib/routes.js';
import { MEDIA_UPLOAD_PATH, webSecurityHeaders } from '../lib/web-policy.js';
import { REFUSE_ABANDONED, asInvocation, refuseAbandonedCalls, startInvocations } from './invocations.js';
import { contextFor, toEvent } from './lambda-event.js';
import { MAX_HEADER_BYTES, onClientError, trackAnswer } from './malformed-requests.js';
import { LOCAL_S3_CREDENTIALS, startLocalS3 } from './s3.js';
import { startLocalSqs } from './sqs.js';
import { MAX_BODY_BYTES, readBody } from './request-body.js';
import { matchRoute, mountAll } from './routing.js';
import type { MountedRoutes } from './routing.js';
import { backfillRequestListing } from './request-listing-backfill.js';
import { startLocalRequestTimers } from './request-timers.js';
import { startLocalStreamTimers } from './stream-timers.js';
import { startLocalEffectsTail } from './effects-tail.js';
import { startLocalSearchTail } from './search-tail.js';
import { startLocalTagSweep } from './tag-sweep.js';
import { ensureVapidKeys } from './vapid.js';
import { isApiPath, serveWebApp } from './web-app.js';
import type { WebApp } from './web-app.js';

/**
 * Runs an invocation under its function timeout, as Lambda does: past it, the answer is
 * 'timed-out' and the invocation is abandoned (its further AWS calls are refused, see
 * refuseAbandonedCalls in local/invocations.ts).
 */
async function withinFunctionTimeout<T>(
  ms: number,
  run: (abandoned: AbortSignal) => Promise<T>,
): Promise<T | 'timed-out'> {
  const abandon = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timed-out'>((ok) => {
    timer = setTimeout(() => {
      abandon.abort();
      ok('timed-out');
    }, ms);
  });
  try {
    return await Promise.race([run(abandon.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** What API Gateway (HTTP API) answers when the function times out: its own bare 500, not our envelope. */
function functionTimedOut(res: ServerResponse, name: string, ms: number): void {
  console.error(`local runtime: ${name} ran past its ${ms / 1000} s function timeout; its invocation is abandoned`);
  res.writeHead(500, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ message: 'Internal Server Error' }));
}

function tooLarge(res: ServerResponse): void {
  res.writeHead(413, { 'content-type': 'application/json; charset=utf-8' });
  res.end(
    JSON.stringify({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: 'Request body is too large.',
        details: { maxBodyBytes: MAX_BODY_BYTES },
      },
    }),
  );
}

export interface LocalApi {
  server: Server;
  url: string;
  close: () => Promise<void>;
}

export interface LocalApiOptions {
  /**
   * Run the stream-timeout loop on in-process timers (default true). Test files that leave
   * streams open turn it off, so an abandoned stream's cancel event cannot land in a later
   * test's assertions; reads and writes still treat overdue streams as cancelled.
   */
  streamTimers?: boolean;
  /** Where the local SQS keeps its queues between runs (npm start); in memory when absent. */
  sqsDataDir?: string;
  /** Where the local S3 keeps the media bucket's objects between runs (npm start); in memory when absent. */
  s3DataDir?: string;
  /**
   * An S3 emulator already running, for the local S3's front (local/s3.ts `shared`): the
   * integration tests' one, shared by the run's files as DynamoDB Local is. Each local API then
   * has buckets of its own in it; `s3DataDir` is the emulator's business.
   */
  s3Upstream?: string;
  /**
   * Run the dispatch queues (default true). Without them inputs are still written but never
   * sealed: test files that do not test dispatch turn it off to keep the shared DynamoDB Local
   * free of background sealing work.
   */
  dispatch?: boolean;
  /**
   * Where the VAPID key pair is kept (npm start: under DATA_DIR, made on the first start);
   * a file of its own in the temporary folder when absent.
   */
  vapidKeysFile?: string;
  /**
   * Run the search index writer on a tail of the event log (default true). Test files that do
   * not search turn it off, to keep the shared DynamoDB Local free of its polling.
   */
  search?: boolean;
  /** The folder of the search index segments' local copies (npm start: under DATA_DIR); a temporary one when absent. */
  searchCacheDir?: string;
  /**
   * Resolves once the table answers (npm start boots DynamoDB Local meanwhile): the emulators
   * start and the handlers load before it; the background jobs and the listener start after it.
   */
  tableReady?: Promise<unknown>;
  /**
   * Runs once the table is ready and the handlers' environment is set, before the background
   * jobs and the listener start (npm start settles the event numbers a previous runtime left).
   */
  afterTable?: () => Promise<void>;
  /**
   * Serve this web app at every path outside /api (npm start; its build may still be running:
   * those requests wait for it). Without it every path goes to the routes and the catch-all.
   */
  web?: WebApp | Promise<WebApp>;
  /**
   * Load each route's handler on its first request, as Lambda loads a function's code on its
   * first invocation (the integration tests: a file uses a few routes), instead of all of them at
   * start (default: a module that fails to load fails npm start).
   */
  lazyHandlers?: boolean;
  /** Told when the emulators are up and when the handlers are loaded (npm start prints it). */
  onProgress?: (step: 'emulators' | 'handlers') => void;
  /**
   * Asked at each HTTP invocation: seconds to run it under in place of its route's function
   * timeout (lib/routes.ts), or undefined for the route's own. A test seam: the files that wait
   * out a timeout or a deadline shorten it (test/support/api.ts); npm start never sets it.
   */
  functionTimeoutSeconds?: () => number | undefined;
}

/**
 * Validates the environment the handlers will read (a missing variable fails here, by name)
 * and checks that nothing read it before the emulators' variables were set.
 */
function assertEnvironmentRead(sqs: { dispatchQueueUrl: string } | undefined, s3: { bucket: string }): void {
  const e = env();
  if (e.MEDIA_BUCKET !== s3.bucket || (sqs && e.DISPATCH_QUEUE_URL !== sqs.dispatchQueueUrl)) {
    throw new Error(
      'The function environment was read before the local runtime set it up: start the local API before using the ' +
        'handlers.',
    );
  }
}

/** Serves every route on 127.0.0.1:`port` (0 picks a free port). */
export async function startLocalApi(port: number, options: LocalApiOptions = {}): Promise<LocalApi> {
  // Each request and job run gets its own invocation context (local/invocations.ts).
  startInvocations();
  // Everything the handlers find through the environment (the table is the caller's: its
  // TABLE_NAME and DYNAMODB_ENDPOINT are set already) starts first, and its variables are set,
  // before any handler is mounted: functions/platform/env.ts reads the environment once.
  // The dispatch queues, as in AWS.
  const sqs = options.dispatch === false ? undefined : await startLocalSqs(options.sqsDataDir, options.tableReady);
  if (sqs)
    Object.assign(process.env, {
      SQS_ENDPOINT: sqs.endpoint,
      DISPATCH_QUEUE_URL: sqs.dispatchQueueUrl,
      FLUSH_QUEUE_URL: sqs.flushQueueUrl,
    });
  // The media bucket, as in AWS.
  let s3: Awaited<ReturnType<typeof startLocalS3>>;
  try {
    s3 = await startLocalS3(options.s3DataDir, undefined, options.s3Upstream);
  } catch (error) {
    await sqs?.stop();
    throw error;
  }
  // The search index's local segment copies: a temporary folder (removed on close) unless given.
  const searchCacheDir = options.searchCacheDir ?? mkdtempSync(join(tmpdir(), 'chat-relay-search-'));
  Object.assign(process.env, {
    // The local S3 checks signatures (local/s3.ts) with a secret of this process; the other
    // emulators take any credentials, so the functions' clients all sign with these.
    AWS_ACCESS_KEY_ID: LOCAL_S3_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_S3_CREDENTIALS.secretAccessKey,
    S3_ENDPOINT: s3.endpoint,
    MEDIA_BUCKET: s3.bucket,
    SEARCH_BUCKET: s3.searchBucket,
    SEARCH_CACHE_DIR: searchCacheDir,
    MEDIA_UPLOAD_PATH,
  });
  // The VAPID key pair, held apart from the configuration as the stack's secret holds it.
  const vapidKeysFile = options.vapidKeysFile ?? join(tmpdir(), `chat-relay-vapid-${process.pid}.json`);
  Object.assign(process.env, { VAPID_KEYS_FILE: vapidKeysFile, VAPID_PUBLIC_KEY: ensureVapidKeys(vapidKeysFile) });
  options.onProgress?.('emulators');
  let handlers: MountedRoutes;
  try {
    assertEnvironmentRead(sqs, s3);
    handlers = await mountAll({ lazy: options.lazyHandlers ?? false });
    options.onProgress?.('handlers');
    await options.tableReady;
    await options.afterTable?.();
    // A data folder from before the approvals list: its requests get their list keys, once.
    await backfillRequestListing();
  } catch (error) {
    if (!options.searchCacheDir) rmSync(searchCacheDir, { recursive: true, force: true });
    await sqs?.stop();
    await s3.stop();
    throw error;
  }
  // An invocation past its function timeout changes nothing more (local/invocations.ts).
  // (Replaced, not added twice, when a process starts a second local API on the same clients.)
  for (const stack of [
    ddb().middlewareStack,
    s3Client().middlewareStack,
    ...(sqs ? [sqsClient().middlewareStack] : []),
  ])
    stack.remove(REFUSE_ABANDONED.name);
  ddb().middlewareStack.add(refuseAbandonedCalls, REFUSE_ABANDONED);
  s3Client().middlewareStack.add(refuseAbandonedCalls, REFUSE_ABANDONED);
  if (sqs) sqsClient().middlewareStack.add(refuseAbandonedCalls, REFUSE_ABANDONED);
  // The stream-timeout loop and the tag sweep (in-process timers standing in for AWS schedules).
  const streamTimers = options.streamTimers === false ? undefined : startLocalStreamTimers();
  // Request deadlines' reminders and expiries, the stored ones set again (local/request-timers.ts).
  const requestTimers = startLocalRequestTimers();
  const tagSweep = startLocalTagSweep();
  // The table stream's consumers, their handlers fed stream records by tails of the event log
  // (local/stream-tail.ts): push, webhooks and auto-rename (local/effects-tail.ts: idle while all
  // are off), and the search index writer (local/search-tail.ts).
  const effectsTail = startLocalEffectsTail();
  const searchTail = options.search === false ? undefined : startLocalSearchTail();
  const stopServices = async () => {
    streamTimers?.stop();
    requestTimers.stop();
    tagSweep.stop();
    await effectsTail.stop();
    await searchTail?.stop();
    if (!options.searchCacheDir) rmSync(searchCacheDir, { recursive: true, force: true });
    await sqs?.stop();
    await s3.stop();
  };
  const { mounted, fallback } = handlers;
  const timeoutOf = (route: Parameters<typeof functionTimeoutSeconds>[0]) =>
    options.functionTimeoutSeconds?.() ?? functionTimeoutSeconds(route);
  // The app's headers, once: its CSP names where downloads over the inline limit are redirected
  // (presigned URLs of the local S3); another build's allows inline styles too (WebApp.foreign).
  const mediaOrigin = new URL(s3.endpoint).origin;
  const webHeaders = {
    own: webSecurityHeaders(mediaOrigin),
    foreign: webSecurityHeaders(mediaOrigin, { foreignBuild: true }),
  };
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    trackAnswer(req, res);
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      // Upload sessions' form POSTs from the web app's pages, streamed on to the bucket
      // (docs/architecture.md "Large files").
      if (path === MEDIA_UPLOAD_PATH) return s3.formUpload(req, res);
      if (options.web && !isApiPath(path)) return serveWebApp(req, res, await options.web, webHeaders);
      const { found, params } = matchRoute(mounted, req.method ?? 'GET', path);
      // Loaded before the invocation starts (its clock, its context), as Lambda's init precedes it.
      const handler = found ? await found.handler() : undefined;
      const fallbackRun = handler ? undefined : await fallback();
      const body = await readBody(req);
      if (body === 'too-large') return tooLarge(res);
      // A function URL's event carries the routeKey `$default`, as the catch-all's does.
      const event = toEvent(req, body, { route: found?.route.streaming ? undefined : found?.route, params });
      if (found && handler?.kind === 'streaming') {
        // The event stream: the function-URL handler writes straight into this response.
        const run = handler.run;
        const budgetMs = timeoutOf(found.route) * 1000;
        const context = contextFor(found.route.handler, event.requestContext.requestId, budgetMs);
        return asInvocation(() => run(event, res, context), event.requestContext.requestId).catch((error: unknown) => {
          // The client left: the body's pipe ends with "premature close", which is no failure.
          if (!res.destroyed) throw error;
        });
      }
      // Tells long waits (dispatch claims) that the client left; Lambda behind API Gateway cannot.
      const clientGone = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) clientGone.abort();
      });
      const timeoutMs = timeoutOf(found?.route) * 1000;
      const context: ContextWithClient = contextFor(
        found?.route.handler ?? fallbackHandler,
        event.requestContext.requestId,
        timeoutMs,
      );
      context[CLIENT_GONE] = clientGone.signal;
      const result = await withinFunctionTimeout(timeoutMs, (abandoned) =>
        asInvocation(
          () => (handler?.kind === 'buffered' ? handler.run : fallbackRun!)(event, context),
          event.requestContext.requestId,
          abandoned,
        ),
      );
      if (clientGone.signal.aborted) return;
      if (result === 'timed-out') return functionTimedOut(res, found?.route.handler ?? fallbackHandler, timeoutMs);
      const payload = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined;
      const cookies = result.cookies?.length ? { 'set-cookie': result.cookies } : {};
      res.writeHead(result.statusCode, { ...result.headers, ...cookies });
      res.end(payload);
    })().catch((error: unknown) => {
      // Handlers answer their own errors; reaching here means the adapter itself failed.
      console.error('local adapter error', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(
        JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'Unexpected server error.', details: null } }),
      );
    });
  });
  server.on('clientError', onClientError);
  // An idle connection is closed by its client first: Node's fetch (undici 6) keeps one for the
  // hint less 1 s on a timer of 1 s resolution, so with 5 s here a busy test process sent its next
  // request on a connection this server was closing (ECONNRESET, seen in the search tests).
  // API Gateway keeps idle connections for about a minute too; stop() closes them all.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }).then(stopServices),
  };
}
