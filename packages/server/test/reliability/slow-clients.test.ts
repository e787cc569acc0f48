import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const config: ConfigFile = {
  ...testConfig(),
  server: {
    max_connections_per_address: 5,
    headers_timeout_ms: 400,
    body_idle_timeout_ms: 400,
    request_timeout_ms: 5_000,
  },
};

/** Opens a raw connection from `localAddress`; resolves when it connected. */
function connect(port: number, localAddress = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Milliseconds until the server closes `socket`, or `null` if it is still open after `limitMs`. */
function closedWithin(socket: net.Socket, limitMs: number): Promise<number | null> {
  const started = performance.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
    socket.on('error', () => {});
    socket.resume();
  });
}

/** Writes one byte every `everyMs` until the socket closes. */
function trickle(socket: net.Socket, everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer);
    else socket.write('a');
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

describeEachDialect('slow and idle clients are cut off on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  let port = 0;
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /** A paid embeddings request over a real connection from 127.0.0.1. */
  const embed = (key: string, input: string) =>
    fetch(`http://127.0.0.1:${port}/v1/embeddings`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({ model: 'sim-embed', input }),
    });

  async function start(): Promise<TestGateway> {
    gateway = await startGateway(dialect, { config });
    port = Number(new URL(await gateway.listen()).port);
    return gateway;
  }

  it('a connection that never sends a byte is closed after the headers deadline', async () => {
    await start();
    const idle = await connect(port);
    sockets.push(idle);
    expect(await closedWithin(idle, 3_000)).not.toBeNull();
  });

  it('headers sent one byte at a time are cut off at the headers deadline', async () => {
    await start();
    const slow = await connect(port);
    sockets.push(slow);
    slow.write('POST /v1/embeddings HTTP/1.1\r\nHost: x\r\n');
    trickle(slow, 100);
    expect(await closedWithin(slow, 3_000)).not.toBeNull();
  });

  it('a body still trickling in after a 401 does not keep the connection open', async () => {
    await start();
    const slow = await connect(port);
    sockets.push(slow);
    let answer = '';
    slow.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    slow.write(
      'POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    // Faster than the body-silence deadline: only the early answer can close it.
    trickle(slow, 50);
    expect(await closedWithin(slow, 2_000)).not.toBeNull();
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
  });

  it('a body that goes silent is cut off, and nothing is recorded or held', async () => {
    const client = await start();
    const owner = await client.account(1_000_000);
    const slow = await connect(port);
    sockets.push(slow);
    const idempotencyKey = randomUUID();
    slow.write(
      `POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${owner.key}\r\nIdempotency-Key: ${idempotencyKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`,
    );
    expect(await closedWithin(slow, 3_000)).not.toBeNull();
    const record = await client.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key: owner.key,
    });
    expect(record.statusCode).toBe(404);
    expect(await client.balance(owner.accountId)).toEqual({
      balance: 1_000_000,
      held: 0,
      available: 1_000_000,
    });
  });

  it('a slow upstream answer is not cut off by the body-silence deadline once the body has arrived', async () => {
    const client = await start();
    const owner = await client.account(1_000_000);
    const response = await embed(owner.key, 'slow [sim:delay=1200]');
    expect(response.status).toBe(200);
  });

  it('one client address cannot hold more connections than its cap; others are still served', async () => {
    const client = await start();
    const owner = await client.account(1_000_000);
    const flood = await Promise.all(
      Array.from({ length: 12 }, () => connect(port, '127.0.0.2').catch(() => undefined)),
    );
    const opened = flood.filter((socket): socket is net.Socket => socket !== undefined);
    sockets.push(...opened);
    const closes = await Promise.all(opened.map((socket) => closedWithin(socket, 200)));
    // Past the cap, connections are closed at once; the first five stay (until their deadline).
    expect(closes.filter((closed) => closed === null)).toHaveLength(5);
    const response = await embed(owner.key, 'still served');
    expect(response.status).toBe(200);
  });
});
