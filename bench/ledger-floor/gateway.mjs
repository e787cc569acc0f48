// The floors' HTTP gateway, shared by bench/ledger-floor.mjs and bench/ledger-floor-pg.mjs:
// node:http + undici around a store's `claim` and `finish`, and the key's hash.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { Pool } from 'undici';
import { PRICE_PER_TOKEN } from './money.mjs';

/**
 * The gateway around a store's `claim` and `finish` (ledger-floor.mjs's SQLite ones, or
 * bench/ledger-floor-pg.mjs's): node:http + undici, the key's hash, a JSON parse, the claim before
 * the upstream call and the finish before the answer. A store's refusal answers its `status` (409
 * for a used idempotency key, 402 for funds), anything else 502.
 */
export function serveGateway(store, label, where) {
  const port = Number(process.env.PROXY_PORT || 18110);
  const upstreamUrl = process.env.UPSTREAM_URL || 'http://127.0.0.1:18000';
  const pool = new Pool(upstreamUrl, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });

  // Authentication: the key's SHA-256 against the keys known (Tollgate keeps them cached too).
  const keys = new Map([[sha256('sk-bench'), { keyId: 'key', accountId: 'acct' }]]);
  const errorBody = (message) => JSON.stringify({ error: { message, type: 'gateway_error' } });

  async function accounted(request, response) {
    const principal = keys.get(
      sha256(String(request.headers.authorization ?? '').replace(/^Bearer /, '')),
    );
    const idempotencyKey = request.headers['idempotency-key'];
    if (principal === undefined || typeof idempotencyKey !== 'string') {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(errorBody('a key and an Idempotency-Key are required'));
      return;
    }
    const raw = await readAll(request);
    const body = JSON.parse(raw);
    const reserve = (raw.length + (body.max_tokens ?? 1024)) * PRICE_PER_TOKEN;
    const ids = await store.claim(
      principal,
      idempotencyKey,
      sha256(raw),
      request.url,
      body.model,
      reserve,
    );
    const payload = JSON.stringify(body);
    const upstream = await pool.request({
      path: request.url,
      method: 'POST',
      body: payload,
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer upstream-key',
        'content-length': Buffer.byteLength(payload),
      },
    });
    const type = String(upstream.headers['content-type'] ?? '');
    if (type.startsWith('text/event-stream')) {
      response.writeHead(upstream.statusCode, {
        'content-type': type,
        'cache-control': 'no-cache',
      });
      let carry = '';
      let transcript = '';
      let usage;
      for await (const chunk of upstream.body) {
        response.write(chunk);
        const text = chunk.toString('utf8');
        transcript += text;
        carry += text;
        let end;
        while ((end = carry.indexOf('\n\n')) >= 0) {
          const event = carry.slice(0, end);
          carry = carry.slice(end + 2);
          if (event.startsWith('data: {') && event.includes('"usage"'))
            usage = JSON.parse(event.slice(6)).usage ?? usage;
        }
      }
      await store.finish(principal, ids, reserve, usage, upstream.statusCode, transcript);
      response.end();
      return;
    }
    const answer = JSON.parse(await readAll(upstream.body));
    const out = JSON.stringify(answer);
    await store.finish(principal, ids, reserve, answer.usage, upstream.statusCode, out);
    response.writeHead(upstream.statusCode, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(out),
    });
    response.end(out);
  }

  const server = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/__health') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
      return;
    }
    accounted(request, response).catch((error) => {
      if (response.headersSent) return void response.destroy(error);
      const status = error.status ?? (error.code === 'SQLITE_CONSTRAINT_UNIQUE' ? 409 : 502);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(errorBody(String(error?.message ?? error)));
    });
  });
  server.keepAliveTimeout = 120_000;
  server.listen(port, '127.0.0.1', () =>
    console.log(`ledger-floor (${label}) on http://127.0.0.1:${port} -> ${upstreamUrl}, ${where}`),
  );
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.on(signal, () => {
      server.close();
      process.exit(0);
    });
}

export function sha256(text) {
  return createHash('sha256').update(text).digest('hex');
}
async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
