import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { freePort, waitForHealth } from '../helpers/processes.js';

const main = new URL('../../dist/main.js', import.meta.url).pathname;
const ADMIN_TOKEN = 'flood-admin-token-0123456789';
/** The gateway runs with this many file descriptors, far fewer than the flood's connections. */
const FD_LIMIT = 2_048;
const FLOOD_ADDRESSES = 10;
const IDLE_PER_ADDRESS = 500;
const SLOW_BODIES = 200;

/** Opens a connection from `localAddress`, or resolves `undefined` if it is refused or reset. */
function open(port: number, localAddress: string): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.on('error', () => resolve(undefined));
  });
}

describe('a connection flood from other addresses', () => {
  let gateway: ChildProcess | undefined;
  let dir: string | undefined;
  const held: net.Socket[] = [];
  afterEach(() => {
    for (const socket of held.splice(0)) socket.destroy();
    gateway?.kill('SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('5,000+ idle connections and slow bodies do not make paid requests fail or bill wrongly', async () => {
    if (!existsSync(main)) throw new Error('build first: npm test builds dist/');
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-flood-'));
    const config: ConfigFile = {
      ...defaultConfig,
      limits: { requests_per_minute: 100_000, concurrent_requests: 1_000 },
      // Deadlines long enough that the flood is still held while the paid requests run.
      server: {
        max_connections: 1_500,
        max_connections_per_address: 100,
        headers_timeout_ms: 120_000,
        body_idle_timeout_ms: 120_000,
      },
    };
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
    const port = await freePort();
    gateway = spawn(
      'bash',
      ['-c', `ulimit -n ${FD_LIMIT} && exec "${process.execPath}" "${main}"`],
      {
        env: {
          ...process.env,
          PORT: String(port),
          HOST: '127.0.0.1',
          TOLLGATE_DATA_DIR: dir,
          TOLLGATE_CONFIG: path.join(dir, 'config.json'),
          TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
          TOLLGATE_DATABASE_URL: '',
          TOLLGATE_REDIS_URL: '',
          LOG_LEVEL: 'error',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const base = `http://127.0.0.1:${port}`;
    await waitForHealth(base);
    const admin = async (url: string, body: unknown) =>
      (await (
        await fetch(`${base}/admin/v1${url}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers: {
            authorization: `Bearer ${ADMIN_TOKEN}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
      ).json()) as Record<string, unknown>;
    const account = await admin('/accounts', { email: 'flood@example.test' });
    const accountId = String(account['id']);
    await admin(`/accounts/${accountId}/topups`, { amount: 10_000_000, reference: 'flood' });
    const key = String((await admin(`/accounts/${accountId}/keys`, { kind: 'personal' }))['key']);

    // The flood: idle connections from ten addresses, slow bodies from an eleventh.
    const attempts = [];
    for (let address = 0; address < FLOOD_ADDRESSES; address += 1)
      for (let index = 0; index < IDLE_PER_ADDRESS; index += 1)
        attempts.push(open(port, `127.0.0.${address + 2}`));
    const idle = await Promise.all(attempts);
    const slowBodies = await Promise.all(
      Array.from({ length: SLOW_BODIES }, () => open(port, `127.0.0.${FLOOD_ADDRESSES + 2}`)),
    );
    for (const socket of [...idle, ...slowBodies]) if (socket !== undefined) held.push(socket);
    for (const socket of slowBodies) {
      socket?.write(
        'POST /v1/assets HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 100000000\r\n\r\n',
      );
      socket?.write(Buffer.alloc(16));
    }
    expect(attempts.length + SLOW_BODIES).toBeGreaterThanOrEqual(5_000);

    // Paid requests from another address keep succeeding, billed exactly.
    const statuses: number[] = [];
    let charged = 0;
    for (let batch = 0; batch < 10; batch += 1) {
      const responses = await Promise.all(
        Array.from({ length: 10 }, async (_, index) => {
          const response = await fetch(`${base}/v1/embeddings`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              'idempotency-key': randomUUID(),
            },
            body: JSON.stringify({ model: 'sim-embed', input: `paid ${batch} ${index}` }),
          });
          const requestId = response.headers.get('x-service-request-id') ?? '';
          await response.arrayBuffer();
          return { status: response.status, requestId };
        }),
      );
      for (const { status, requestId } of responses) {
        statuses.push(status);
        const record = (await (
          await fetch(`${base}/v1/requests/${requestId}`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).json()) as { bill?: { amount?: number } };
        charged += record.bill?.amount ?? 0;
      }
    }
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const after = await admin(`/accounts/${accountId}`, undefined);
    expect(after).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
    expect(charged).toBeGreaterThan(0);
    const ledger = await admin('/ledger/check', undefined);
    expect(ledger['violations']).toEqual([]);
  }, 120_000);
});
