/**
 * `npm start` listens on loopback only (issue 24 item 4): DynamoDB Local and the SQS and S3
 * emulators accept any credentials or none, so a listener on another address would hand the
 * table (the instance secret included), the media bucket and the dispatch queues to anyone on
 * the network. The runtime starts as `npm start` starts it (the launcher, the precompiled runtime
 * and its DynamoDB Local JVM, with a data folder), and every TCP socket any process of its group
 * listens on is read from /proc: each must be on 127.0.0.1 or ::1. Then the services behind them
 * still answer: a chat is created and listed (DynamoDB Local), a file is stored and read back
 * (the S3 emulator behind its front).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRuntime } from '../../support/runtime.js';
import type { Runtime } from '../../support/runtime.js';

const dataDir = mkdtempSync(join(tmpdir(), 'chat-relay-loopback-'));
let runtime: Runtime;

beforeAll(async () => {
  runtime = await startRuntime({ DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'SILENT' }, 'local/main.ts');
});
afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Listener {
  command: string;
  address: string;
  port: number;
}

/** The processes of a process group: pid and command name. */
function processesOf(group: number): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // Gone meanwhile.
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ")".
    const close = stat.lastIndexOf(')');
    const [, , pgrp] = stat.slice(close + 2).split(' ');
    if (Number(pgrp) === group) found.push({ pid: Number(name), command: stat.slice(stat.indexOf('(') + 1, close) });
  }
  return found;
}

/** The socket inodes a process holds open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket) inodes.add(socket[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  return inodes;
}

/** An address of /proc/net/tcp{,6} (hex, in 32-bit words of host byte order), as ip(8) prints it. */
function decodeAddress(hex: string): string {
  const bytes = Buffer.concat(hex.match(/.{8}/g)!.map((word) => Buffer.from(word, 'hex').reverse()));
  if (bytes.length === 4) return [...bytes].join('.');
  // An IPv4 address on an IPv6 socket (Java binds 127.0.0.1 so): ::ffff:127.0.0.1.
  if (bytes.subarray(0, 12).equals(Buffer.from('00000000000000000000ffff', 'hex')))
    return `::ffff:${decodeAddress(hex.slice(24))}`;
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

/** 127.0.0.0/8 (also as IPv4 on an IPv6 socket) and ::1. */
const isLoopback = (address: string) => /^(::ffff:)?127\./.test(address) || address === '::1';

/** Every TCP socket in the LISTEN state held by a process of the group. */
function listenersOf(group: number): Listener[] {
  const owners = new Map<string, string>();
  for (const { pid, command } of processesOf(group)) {
    for (const inode of socketInodes(pid)) owners.set(inode, command);
  }
  const listeners: Listener[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1]!, fields[3]!, fields[9]!];
      const command = owners.get(inode);
      if (state !== '0A' || !command) continue; // 0A: LISTEN.
      const [address, port] = local.split(':');
      listeners.push({ command, address: decodeAddress(address!), port: parseInt(port!, 16) });
    }
  }
  return listeners.sort((a, b) => a.port - b.port);
}

describe('npm start', () => {
  it('listens on loopback only: the API, both emulators and DynamoDB Local', () => {
    const listeners = listenersOf(runtime.process.pid!);
    // What is there: the API on its port, DynamoDB Local's JVM, and the emulators (two fauxqs
    // servers and the S3 front) in the runtime's Node process.
    expect(listeners.map((l) => l.port)).toContain(Number(new URL(runtime.url).port));
    expect(listeners.filter((l) => l.command === 'java')).toHaveLength(1);
    expect(listeners.filter((l) => l.command === 'node').length).toBeGreaterThanOrEqual(4);
    expect(listeners.filter((l) => !isLoopback(l.address))).toEqual([]);
  });

  it('still serves what the table and the media bucket hold', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${runtime.url}/api/v1${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, text: await res.text() };
    };
    const created = await call('POST', '/chats', {
      agentIds: ['agent-default'],
      modelId: 'model-default',
      title: 'on loopback',
    });
    expect(created.status).toBe(201);
    const chat = JSON.parse(created.text) as { id: string };
    const listed = await call('GET', '/chats');
    expect(listed.status).toBe(200);
    expect((JSON.parse(listed.text) as { data: { id: string }[] }).data.map((c) => c.id)).toContain(chat.id);

    const uploaded = await call('POST', `/chats/${chat.id}/media`, {
      fileName: 'note.txt',
      contentType: 'text/plain',
      base64Data: Buffer.from('kept on loopback').toString('base64'),
    });
    expect(uploaded.status).toBe(201);
    const media = JSON.parse(uploaded.text) as { id: string };
    const file = await call('GET', `/files/${media.id}`);
    expect(file).toEqual({ status: 200, text: 'kept on loopback' });
  });
});
