import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/store/sqlite-binding.js';

/**
 * bench/ledger-floor.mjs is the floor `bench/goals.sh` sets beside Tollgate: a gateway that keeps
 * only the durable money. Its figure is worth something only if it really writes that money, so
 * the goals run checks its ledger afterwards (`--check`); these cases prove the floor bills
 * every answer and that the check refuses a ledger that does not add up.
 */
const floor = fileURLToPath(new URL('../../../../bench/ledger-floor.mjs', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'ledger-floor-'));
let upstream: Server;
let gateway: ChildProcess;
let base = '';

const usage = { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 };

beforeAll(async () => {
  upstream = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if ((JSON.parse(body) as { stream?: boolean }).stream === true) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'hi' } }] })}\n\n`);
        response.end(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'x', choices: [{ message: { content: 'hi' } }], usage }));
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  probe.close();
  gateway = spawn(process.execPath, [floor], {
    env: {
      ...process.env,
      PROXY_PORT: String(port),
      UPSTREAM_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      FLOOR_DATA_DIR: work,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  gateway.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  // Listening (its first line), or gone: then fail at once with what it said, not at the timeout.
  await Promise.race([
    once(gateway.stdout!, 'data'),
    once(gateway, 'exit').then(([code]) => {
      throw new Error(`bench/ledger-floor.mjs exited (${String(code)}): ${errors}`);
    }),
  ]);
  base = `http://127.0.0.1:${port}`;
});

afterAll(() => {
  gateway?.kill('SIGKILL');
  upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

function chat(idempotencyKey: string, stream = false): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: 'Bearer sk-bench',
      'idempotency-key': idempotencyKey,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream }),
  });
}

function check(): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [floor, '--check', work], { encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

function tamper(statement: string): void {
  const store = new SqliteDatabase(path.join(work, 'floor.sqlite'));
  try {
    store.exec(statement);
  } finally {
    store.close();
  }
}

describe('the ledger floor bills what it claims to measure', () => {
  it('captures every answer, streamed or not, and its ledger checks clean', async () => {
    const answers = await Promise.all([chat('a'), chat('b'), chat('c', true)]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      await answer.text();
    }
    const result = check();
    expect(result.output).toMatch(/ledger-floor: clean/);
    expect(result.output).toContain('"requests":3');
    // 42 tokens at the floor's flat 5 micro-yuan each, three times.
    expect(result.output).toContain(`"captured":${3 * 42 * 5}`);
    expect(result.status).toBe(0);
  });

  it('refuses a used idempotency key instead of billing it again', async () => {
    const again = await chat('a');
    expect(again.status).toBe(409);
    expect(check().output).toContain('"requests":3');
  });

  it('fails the check when the held money does not match the open holds', () => {
    tamper("update accounts set held = held + 1, balance = balance + 1 where id = 'acct'");
    expect(check().status).toBe(1);
    tamper("update accounts set held = held - 1, balance = balance - 1 where id = 'acct'");
    expect(check().status).toBe(0);
  });

  it('fails the check when a capture is missing from the journal', () => {
    tamper(
      "delete from journal where id = (select id from journal where kind = 'capture' limit 1)",
    );
    expect(check().status).toBe(1);
  });
});
