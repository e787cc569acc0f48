import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeOnPostgres } from '../helpers/dialects.js';
import { createScratchDatabase } from '../helpers/postgres-statement.js';
import { freePort } from '../helpers/processes.js';
import {
  requireBuild,
  startGatewayProcess,
  tollgate,
  type GatewayProcess,
} from '../operations/gateway-process.js';

const bin = new URL('../../bin/tollgate.mjs', import.meta.url).pathname;
const pgUrl = process.env['TOLLGATE_TEST_PG_URL'];
const BALANCE = 100_000_000;
/**
 * Upstream timeouts of the gateway under test: a stream may stay silent `idle_ms`, so the kill
 * below (within a second of the stall) finds it still in flight; the sweeper's stale age and
 * the reconciler's grace are 2 × (queue + connect + first byte + idle) = 17 s.
 */
const TIMEOUTS = { connect_ms: 250, first_byte_ms: 4_000, idle_ms: 4_000 };
const QUEUE_TIMEOUT_MS = 250;
const STALE_AFTER_MS =
  2 * (QUEUE_TIMEOUT_MS + TIMEOUTS.connect_ms + TIMEOUTS.first_byte_ms + TIMEOUTS.idle_ms);
/** Bound of every wait for something to happen (generous: the machine is shared). */
const WAIT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

interface OperatorRecord {
  id: string;
  status: string;
  usage: Record<string, number> | null;
  reserve: { amount: number; state: string } | null;
  bill: { amount: number; captured: boolean } | null;
  usage_exceeded_cap: { detail: string } | null;
  resolution: { action: string; amount: number; by: string } | null;
}

/** A database for the gateway processes: its environment, and how to remove it. */
interface TestDatabase {
  readonly env: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

/**
 * The risk (issue 21 item 6): an instance killed with `kill -9` while chat requests are in
 * flight upstream leaves their records `processing` with their holds, and money stays held until
 * an operator acts. With `request_lookup` the next process's sweeper must resolve each on its own
 * by asking the upstream: a stream the upstream finished is charged its reported usage, one whose
 * usage prices above the hold is charged the hold (flagged), a call the upstream never did is
 * released once the grace period passed. Nothing is charged twice (a retry of each idempotency
 * key changes nothing) and the ledger check is clean. Real processes: the gateway, and
 * `tollgate sim` as the upstream, which outlives the gateway and keeps what it was sent.
 */
function killedMidFlight(database: () => Promise<TestDatabase>) {
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('kill -9 with chats in flight upstream: the restarted instance captures the looked-up usage, caps it at the hold, releases what was never done; no double charge, ledger clean', async () => {
    requireBuild();
    const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-lookup-kill-9-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const db = await database();
    cleanups.push(() => db.remove());

    const simulatorPort = await freePort();
    const simulator = spawn(process.execPath, [bin, 'sim', '--port', String(simulatorPort)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(simulator);
    const upstream = `http://127.0.0.1:${simulatorPort}/v1`;
    const lookUp = async (id: string) => {
      try {
        const response = await fetch(`${upstream}/tollgate/requests/${id}`);
        if (response.status !== 200) return undefined;
        return (await response.json()) as { status: string; usage: Record<string, number> };
      } catch {
        return undefined; // not listening yet
      }
    };
    await until('the simulator', () =>
      fetch(`${upstream}/tollgate/requests/req_none`).then(
        (response) => (response.status === 404 ? true : undefined),
        () => undefined,
      ),
    );

    const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
    if (simChat === undefined) throw new Error('the default configuration has sim-chat');
    const config: ConfigFile = {
      ...defaultConfig,
      upstreams: {
        'sim-process': {
          kind: 'openai',
          base_url: upstream,
          timeouts: TIMEOUTS,
          queue_timeout_ms: QUEUE_TIMEOUT_MS,
          request_lookup: true,
        },
      },
      models: [{ ...simChat, upstream: 'sim-process' }],
    };
    const configFile = path.join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(config));
    const env = { ...db.env, TOLLGATE_DATA_DIR: dir, TOLLGATE_CONFIG: configFile };

    const first = await startGatewayProcess(env);
    children.push(first.child);
    const { accountId, key } = await first.account(BALANCE);
    const chats = {
      // Finished upstream (its usage is known there), cut off here by the kill mid-stream.
      streamed: chat(first, key, 'the first stream [sim:stall_after=2]', true),
      // Finished upstream with usage that prices far above what was held for 16 tokens.
      beyondHold: chat(
        first,
        key,
        'the second stream [sim:stall_after=2] [sim:extra_tokens=1000000]',
        true,
      ),
      // Still waiting for its answer when killed: the upstream never does the work.
      neverDone: chat(first, key, 'a slow one [sim:delay=20000]', false),
    };
    // Each is in flight upstream: its record exists and the upstream knows its id.
    const ids: Record<keyof typeof chats, string> = { streamed: '', beyondHold: '', neverDone: '' };
    for (const name of Object.keys(chats) as (keyof typeof chats)[]) {
      ids[name] = await until(`the record of ${name}`, () =>
        recordIdOf(first, key, chats[name].idempotencyKey),
      );
      const expected = name === 'neverDone' ? 'in_progress' : 'completed';
      await until(`the upstream to have ${name}`, async () =>
        (await lookUp(ids[name]))?.status === expected ? true : undefined,
      );
    }
    const upstreamUsage = (await lookUp(ids.streamed))?.usage;

    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    // No record is touched after this (its process is gone): each is stale from here + the age.
    const killedAt = Date.now();
    for (const pending of Object.values(chats)) await pending.answer;
    // Nothing was resolved by the dead process: all three still hold their money.
    const between = await startGatewayProcess(env);
    children.push(between.child);
    for (const id of Object.values(ids))
      expect((await operatorRecord(between, id)).reserve?.state).toBe('open');
    // Until the stale age passes, the first sweep of the new process leaves them alone: stop
    // it, wait out the rest of the stale age since the kill, start another (whose first sweep
    // resolves them).
    await between.stop();
    await sleep(Math.max(0, killedAt + STALE_AFTER_MS + 500 - Date.now()));
    const restarted = await startGatewayProcess(env);
    children.push(restarted.child);

    const settled = async (id: string) => {
      const record = await operatorRecord(restarted, id);
      return ['succeeded', 'failed'].includes(record.status) ? record : undefined;
    };
    const streamed = await until('the streamed chat to be reconciled', () => settled(ids.streamed));
    const beyondHold = await until('the chat beyond its hold', () => settled(ids.beyondHold));
    const neverDone = await until('the chat never done', () => settled(ids.neverDone));

    expect(streamed).toMatchObject({
      status: 'succeeded',
      reserve: { state: 'captured' },
      bill: { captured: true },
      usage_exceeded_cap: null,
      resolution: { action: 'capture', by: 'lookup' },
    });
    expect(streamed.usage).toMatchObject({
      prompt_tokens: upstreamUsage?.['prompt_tokens'],
      completion_tokens: upstreamUsage?.['completion_tokens'],
    });
    expect(streamed.bill?.amount).toBeGreaterThan(0);
    expect(streamed.bill?.amount).toBeLessThan(streamed.reserve?.amount ?? 0);

    expect(beyondHold).toMatchObject({
      status: 'succeeded',
      reserve: { state: 'captured' },
      resolution: { action: 'capture', by: 'lookup' },
    });
    expect(beyondHold.bill?.amount).toBe(beyondHold.reserve?.amount);
    expect(beyondHold.usage_exceeded_cap?.detail).toContain('usage_exceeded_cap');

    expect(neverDone).toMatchObject({
      status: 'failed',
      reserve: { state: 'released' },
      bill: null,
      resolution: { action: 'release', amount: 0, by: 'lookup' },
    });

    const charged = (streamed.bill?.amount ?? 0) + (beyondHold.bill?.amount ?? 0);
    const expectBalance = async () =>
      expect(await restarted.admin('GET', `/accounts/${accountId}`)).toMatchObject({
        balance: BALANCE - charged,
        held: 0,
      });
    await expectBalance();
    // A client retrying each idempotency key is answered from its record: no second charge.
    for (const name of Object.keys(chats) as (keyof typeof chats)[]) {
      const retry = await chat(restarted, key, chats[name].prompt, name !== 'neverDone', {
        idempotencyKey: chats[name].idempotencyKey,
      }).answer;
      expect(retry.requestId, name).toBe(ids[name]);
    }
    await expectBalance();

    const check = await tollgate(env, 'ledger', 'check');
    expect(check.code, check.stdout + check.stderr).toBe(0);
  }, 120_000);
}

/** A chat through `gateway` (streamed or not), sent at once; its answer when it comes (status 0: cut). */
function chat(
  gateway: GatewayProcess,
  key: string,
  prompt: string,
  stream: boolean,
  options: { idempotencyKey?: string } = {},
) {
  const idempotencyKey = options.idempotencyKey ?? randomUUID();
  const answer = fetch(`${gateway.base}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: JSON.stringify({
      model: 'sim-chat',
      max_tokens: 16,
      messages: [{ role: 'user', content: prompt }],
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  }).then(
    async (response) => {
      const requestId = response.headers.get('x-service-request-id');
      await response.text().catch(() => '');
      return { status: response.status, requestId };
    },
    () => ({ status: 0, requestId: null }),
  );
  return { prompt, idempotencyKey, answer };
}

/** The id of the caller's record for `idempotencyKey` (the spec's look-up), once it exists. */
async function recordIdOf(
  gateway: GatewayProcess,
  key: string,
  idempotencyKey: string,
): Promise<string | undefined> {
  const response = await fetch(
    `${gateway.base}/v1/requests?idempotency_key=${encodeURIComponent(idempotencyKey)}`,
    { headers: { authorization: `Bearer ${key}` } },
  );
  if (response.status !== 200) return undefined;
  return ((await response.json()) as { id: string }).id;
}

async function operatorRecord(gateway: GatewayProcess, id: string): Promise<OperatorRecord> {
  return (await gateway.admin('GET', `/requests/${id}`)) as unknown as OperatorRecord;
}

// The two stores' runs side by side (`describe.concurrent`): each has its own database, data
// directory, simulator and gateway processes, and most of each is waiting out the stale age.
describe.concurrent('request look-up across a kill -9', () => {
  describe("of the gateway process on 'sqlite'", () => {
    killedMidFlight(async () => ({
      env: { TOLLGATE_DATABASE_URL: '' },
      remove: async () => {},
    }));
  });

  describeOnPostgres('of the gateway process on $name', () => {
    killedMidFlight(async () => {
      const database = await createScratchDatabase(pgUrl ?? '', 'tollgate_lookup');
      return { env: { TOLLGATE_DATABASE_URL: database.url }, remove: database.drop };
    });
  });
});
