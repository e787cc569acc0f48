import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';
import { requireBuild } from './gateway-process.js';

const bin = new URL('../../bin/tollgate.mjs', import.meta.url).pathname;

/** The first line `child` writes on stdout. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(text.split('\n')[0] ?? '');
    });
    child.once('exit', (code) => reject(new Error(`tollgate sim exited (${String(code)})`)));
  });
}

/**
 * `tollgate sim` prints where to point a client (docs/simulator.md): the base URL with `/v1`, as
 * an upstream's `base_url` and every OpenAI client take it. Printed without it, a client pasted
 * it and got 404 on every route.
 */
describe('tollgate sim', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill('SIGTERM');
  });

  it('prints the base URL a client uses, with /v1, and a client call on it answers', async () => {
    requireBuild();
    const port = await freePort();
    child = spawn(process.execPath, [bin, 'sim', '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const printed = JSON.parse(await firstLine(child)) as { simulator: string };
    expect(printed).toEqual({ simulator: `http://127.0.0.1:${port}/v1` });
    const response = await fetch(`${printed.simulator}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-embed', input: 'hello' }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { object: string }).object).toBe('list');
  }, 60_000);
});
