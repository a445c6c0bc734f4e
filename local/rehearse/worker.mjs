// One execution environment of a rehearsed Lambda function (local/rehearse/host.ts starts it):
// a worker thread with the function's own process.env, which loads the function's bundle from
// its cdk.out asset folder and runs one invocation at a time, as a Lambda sandbox does. Plain
// JavaScript on purpose: it runs as is under `npm start`'s precompiled runtime and under jest.
//
// It provides what Lambda's Node.js runtime provides: the handler's `context`, and the
// `awslambda` global of response streaming (`streamifyResponse`, `HttpResponseStream.from`).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';

const STREAMING = Symbol.for('chat-relay.rehearsal.streaming');
const { codeDir, handler: handlerName, functionName, functionArn, memoryMb } = workerData;

globalThis.awslambda = {
  streamifyResponse(fn) {
    fn[STREAMING] = true;
    return fn;
  },
  HttpResponseStream: {
    from(stream, metadata) {
      stream.head(metadata ?? {});
      return stream;
    },
  },
};

const errorOf = (error) => ({
  errorType: error?.name ?? 'Error',
  errorMessage: error?.message ?? String(error),
});

/** A function's response stream: what the handler writes goes to the host as it is written. */
class ResponseStream extends Writable {
  constructor(id) {
    super();
    this.id = id;
    this.headSent = false;
  }
  head(metadata) {
    if (this.headSent) return;
    this.headSent = true;
    parentPort.postMessage({ type: 'head', id: this.id, metadata });
  }
  _write(chunk, _encoding, done) {
    this.head({});
    parentPort.postMessage({ type: 'chunk', id: this.id, data: new Uint8Array(chunk) });
    done();
  }
  _final(done) {
    this.head({});
    parentPort.postMessage({ type: 'end', id: this.id });
    done();
  }
}

let handler;
const streams = new Map();

async function load() {
  const [file, exported] = handlerName.split('.');
  const candidates = [`${file}.mjs`, `${file}.js`, `${file}.cjs`];
  let module;
  let lastError;
  for (const candidate of candidates) {
    try {
      module = await import(pathToFileURL(join(codeDir, candidate)).href);
      break;
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(candidate)) throw error;
      lastError = error;
    }
  }
  if (!module) throw lastError;
  handler = module[exported];
  if (typeof handler !== 'function') throw new Error(`${handlerName} is undefined or not exported`);
}

function contextFor(message) {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: functionArn,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: message.requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

async function invoke(message) {
  const context = contextFor(message);
  if (handler[STREAMING]) {
    const stream = new ResponseStream(message.id);
    streams.set(message.id, stream);
    try {
      await handler(message.event, stream, context);
      if (!stream.writableEnded && !stream.destroyed) stream.end();
      parentPort.postMessage({ type: 'result', id: message.id, result: null });
    } finally {
      streams.delete(message.id);
    }
    return;
  }
  const result = await handler(message.event, context);
  parentPort.postMessage({ type: 'result', id: message.id, result: result ?? null });
}

const loading = load();
loading.then(
  () => parentPort.postMessage({ type: 'ready' }),
  (error) => parentPort.postMessage({ type: 'init-error', error: errorOf(error) }),
);

parentPort.on('message', (message) => {
  if (message.type === 'abort') {
    // The client went away: the handler's next write fails, as a closed function URL stream does.
    streams.get(message.id)?.destroy(new Error('The client closed the connection.'));
    return;
  }
  if (message.type !== 'invoke') return;
  loading
    .then(() => invoke(message))
    .catch((error) => parentPort.postMessage({ type: 'error', id: message.id, error: errorOf(error) }));
});

// An unhandled rejection ends a Lambda sandbox (Runtime.UnhandledPromiseRejection): end this one.
process.on('unhandledRejection', (reason) => {
  parentPort.postMessage({ type: 'crash', error: errorOf(reason) });
  process.exit(1);
});
