// The self-tests' shared parts (both floors'): the small upstream, the burst through a gateway in a
// child process, the second attempts a store must refuse, and the figures a clean run must show.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { fetch } from 'undici';

export const TEST_USAGE = { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 };

/** The self-test's upstream: a chat answer or a short stream, each with TEST_USAGE. */
export async function testUpstream() {
  const upstream = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (JSON.parse(body).stream === true) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'hi' } }] })}\n\n`);
        response.end(
          `data: ${JSON.stringify({ choices: [], usage: TEST_USAGE })}\n\ndata: [DONE]\n\n`,
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ id: 'x', choices: [{ message: { content: 'hi' } }], usage: TEST_USAGE }),
      );
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  return upstream;
}

/**
 * The gateway `script` in a child process (env: PROXY_PORT, plus `env`): `requests` chat requests
 * at once (a third streamed), each answered 200, and a replay of a used idempotency key answered
 * 409; the child stopped (SIGTERM) before it returns.
 */
export async function gatewayBurst(script, env, requests, problems) {
  const port = await freePort();
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env, PROXY_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  const exited = once(child, 'exit');
  await Promise.race([
    once(child.stdout, 'data'),
    exited.then(([code]) => {
      throw new Error(`the floor ${JSON.stringify(env)} exited (${code}): ${errors}`);
    }),
  ]);
  const base = `http://127.0.0.1:${port}/v1/chat/completions`;
  const chat = (key, stream) =>
    fetch(base, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk-bench',
        'idempotency-key': key,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream }),
    });
  try {
    const answers = await Promise.all(
      Array.from({ length: requests }, (_, index) => chat(`key-${index}`, index % 3 === 0)),
    );
    for (const answer of answers) {
      await answer.text();
      if (answer.status !== 200) problems.push(`an answer was ${answer.status}`);
    }
    const replay = await chat('key-1', false);
    await replay.text();
    if (replay.status !== 409) problems.push(`a replayed key answered ${replay.status}, not 409`);
  } finally {
    child.kill('SIGTERM');
    await exited.catch(() => {});
  }
}

/**
 * On a store after a burst: with a larger hold left open (so that the account's own bounds,
 * held ≥ 0, cannot be what refuses), a second finish of the captured request `captured` and a
 * second claim of a used idempotency key (`key-2`) must both be refused.
 */
export async function secondAttemptsRefused(store, captured, problems) {
  const principal = { keyId: 'key', accountId: 'acct' };
  const refused = async (attempt) =>
    attempt.then(
      () => false,
      () => true,
    );
  await store.claim(
    principal,
    'left-open',
    'f',
    '/v1/chat/completions',
    'm',
    10 * captured.reserve,
  );
  if (
    !(await refused(
      store.finish(principal, captured, captured.reserve, TEST_USAGE, 200, '{"again":true}'),
    ))
  )
    problems.push('a second finish of a captured request was accepted');
  if (!(await refused(store.claim(principal, 'key-2', 'f', '/v1/chat/completions', 'm', 100))))
    problems.push('a used idempotency key was claimed again');
}

/** The ledger after a self-test: clean, caught up, every answered request captured once. */
export function checkSelfTestFigures(clean, figures, requests, problems) {
  if (!clean) problems.push(`ledger not clean ${JSON.stringify(figures)}`);
  if (figures.lag !== undefined && figures.lag !== 0)
    problems.push(`the read model is ${figures.lag} events behind after catching up`);
  if (figures.requests !== requests + 1)
    problems.push(`${figures.requests} records, not ${requests} and the one left open`);
  const expected = requests * (TEST_USAGE.prompt_tokens + TEST_USAGE.completion_tokens) * 5;
  if (figures.captured !== expected || figures.balanceMoved !== expected)
    problems.push(
      `captured ${figures.captured} and moved ${figures.balanceMoved}, not ${expected} each`,
    );
}

export async function freePort() {
  const probe = http.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
