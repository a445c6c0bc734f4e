/**
 * A fauxqs emulator (local/sqs.ts, local/s3.ts) listening on 127.0.0.1 only. It checks no
 * credentials, so on another address anyone on the network could read, replace or inject the
 * queues' messages and the buckets' objects. fauxqs 2.4.1 listens on 0.0.0.0 whatever it is told
 * (its startFauxqs calls `app.listen({ port, host: '0.0.0.0' })`; its `host` option only names
 * the host in queue URLs). So while it starts, a listen on every interface (0.0.0.0 or ::) is
 * made on 127.0.0.1 instead, and its address is checked after: a fauxqs that binds another way
 * fails to start here rather than listening on the network.
 */
import { Server } from 'node:net';
import type { ListenOptions } from 'node:net';
import { startFauxqs } from 'fauxqs';
import type { FauxqsServer } from 'fauxqs';

const LOOPBACK = '127.0.0.1';
const EVERY_INTERFACE = new Set(['0.0.0.0', '::']);
const listen = Server.prototype.listen;

function listenOnLoopback(this: Server, ...args: unknown[]): Server {
  const [options] = args;
  if (options && typeof options === 'object' && EVERY_INTERFACE.has((options as ListenOptions).host ?? '')) {
    args[0] = { ...options, host: LOOPBACK };
  }
  return (listen as (...a: unknown[]) => Server).apply(this, args);
}

/** How many starts are under way (the listen is replaced while any is). */
let starting = 0;

export async function startFauxqsOnLoopback(options: Parameters<typeof startFauxqs>[0]): Promise<FauxqsServer> {
  if (starting++ === 0) Server.prototype.listen = listenOnLoopback as typeof listen;
  let server: FauxqsServer;
  try {
    server = await startFauxqs(options);
  } finally {
    if (--starting === 0) Server.prototype.listen = listen;
  }
  const { hostname } = new URL(server.address);
  if (hostname !== LOOPBACK) {
    await server.stop();
    throw new Error(`fauxqs listens on ${hostname}, not ${LOOPBACK} (was fauxqs upgraded? see local/fauxqs.ts)`);
  }
  return server;
}
