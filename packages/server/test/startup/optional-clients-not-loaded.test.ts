import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { freePort, waitForHealth } from '../helpers/processes.js';

const main = new URL('../../dist/main.js', import.meta.url).pathname;

/**
 * A gateway pays in memory at rest for every library it imports (bench/RESULTS.md, "Memory at
 * rest"). Stripe's SDK, the S3 client and the Redis client serve settings the embedded default
 * does not have (payments, `storage.kind: "s3"`, `TOLLGATE_REDIS_URL`): each is imported only
 * when its setting is there. The gateway process records every package it resolves (a module
 * hook given with `--import`), and serves before it is read.
 */
it('a gateway on the embedded default never loads the Stripe, S3 or Redis clients', async () => {
  if (!existsSync(main)) throw new Error('build first: npm test builds dist/');
  const work = mkdtempSync(path.join(tmpdir(), 'tollgate-optional-clients-'));
  const resolved = path.join(work, 'resolved.txt');
  const hooks = path.join(work, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  if (!/^(\\.|\\/|node:|file:)/.test(specifier)) appendFileSync(${JSON.stringify(resolved)}, specifier + '\\n');
  return next(specifier, context);
}
`,
  );
  const register = path.join(work, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(TOLLGATE_|LOG_|STRIPE_)/.test(name)),
  );
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', register, main], {
    env: { ...clean, PORT: String(port), TOLLGATE_DATA_DIR: path.join(work, 'data') },
    stdio: 'ignore',
  });
  try {
    await waitForHealth(`http://127.0.0.1:${port}`);
    const packages = new Set(readFileSync(resolved, 'utf8').trim().split('\n'));
    // The record works: the gateway's own framework and store are there.
    expect(packages).toContain('fastify');
    expect(packages).toContain('kysely');
    for (const optional of ['stripe', '@aws-sdk/client-s3', 'ioredis'])
      expect(packages, optional).not.toContain(optional);
  } finally {
    child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
});
