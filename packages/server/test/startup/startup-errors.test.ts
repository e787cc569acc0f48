import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { postgresService } from '../helpers/dialects.js';
import { freePort } from '../helpers/processes.js';
import { describeNeeding } from '../helpers/required-services.js';

const main = new URL('../../dist/main.js', import.meta.url).pathname;

interface Outcome {
  readonly code: number | null;
  /** Standard error's lines, without the empty last one. */
  readonly errors: string[];
  readonly stdout: string;
}

/** Starts the built gateway with `env` (on top of a clean one) and waits for it to give up. */
function start(env: Record<string, string>): Promise<Outcome> {
  if (!existsSync(main)) throw new Error('build first: npm test builds dist/');
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(TOLLGATE_|LOG_)/.test(name)),
  );
  const child = spawn(process.execPath, [main], { env: { ...clean, LOG_FORMAT: 'json', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, errors: stderr.replace(/\n$/, '').split('\n'), stdout });
    }),
  );
}

/** What every start-up failure must look like: exit 1, no stack trace anywhere. */
function expectCleanFailure(outcome: Outcome): void {
  const all = `${outcome.errors.join('\n')}\n${outcome.stdout}`;
  expect(outcome.code, all).toBe(1);
  expect(all).not.toMatch(/^\s+at /m);
  for (const line of outcome.errors) expect(line, all).not.toMatch(/^\s*\{|Error:/);
}

/**
 * An operator's first start that fails must say, in one line, what is wrong and how to fix it:
 * a stack trace (or "database migration failed") sends them to the source code instead. Each
 * case starts the real built process and reads what it prints.
 */
describe('a gateway that cannot start says why in one line', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-startup-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a port already in use: names the address and another port to use', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const outcome = await start({ PORT: String(port), TOLLGATE_DATA_DIR: dir });
      expectCleanFailure(outcome);
      expect(outcome.errors).toEqual([
        `tollgate: cannot listen on 127.0.0.1:${port}: the port is already in use by another ` +
          `process (another Tollgate?). Stop it, or start on another port: PORT=${port + 1} npm start`,
      ]);
    } finally {
      taken.close();
    }
  });

  it('an unreachable PostgreSQL: names the server it could not connect to', async () => {
    const closed = await freePort();
    const outcome = await start({
      PORT: String(await freePort()),
      TOLLGATE_DATA_DIR: dir,
      TOLLGATE_DATABASE_URL: `postgres://tollgate:secret-password@127.0.0.1:${closed}/tollgate`,
    });
    expectCleanFailure(outcome);
    expect(outcome.errors).toHaveLength(1);
    expect(outcome.errors[0]).toMatch(
      new RegExp(
        `^tollgate: cannot connect to PostgreSQL at 127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\): start the server .* or check TOLLGATE_DATABASE_URL$`,
      ),
    );
    expect(outcome.errors[0]).not.toContain('secret-password');
  });

  it('a configuration file with several mistakes: one header line, then every mistake at once', async () => {
    const file = path.join(dir, 'tollgate.json');
    // A type error, an unknown upstream and a bad price (an image model without its price per
    // image): zod alone would report only the type error until it was fixed.
    const models = structuredClone(defaultConfig).models.map((model) =>
      model.id === 'sim-chat'
        ? { ...model, upstream: 'nowhere' }
        : model.id === 'sim-image'
          ? { ...model, prices: { ...model.prices, per_image: undefined } }
          : model,
    );
    const chat = models.findIndex((model) => model.id === 'sim-chat');
    const image = models.findIndex((model) => model.id === 'sim-image');
    const broken = { ...defaultConfig, limits: { body_bytes: 'four megabytes' }, models };
    writeFileSync(file, JSON.stringify(broken));
    const outcome = await start({ TOLLGATE_CONFIG: file, TOLLGATE_DATA_DIR: dir });
    expectCleanFailure(outcome);
    expect(outcome.errors).toEqual([
      `tollgate: invalid configuration in ${file}:`,
      '  limits.body_bytes: Invalid input: expected number, received string',
      `  models.${chat}.upstream: unknown upstream nowhere`,
      `  models.${image}.prices.per_image: required for a model of family images`,
    ]);
  });

  it('several bad environment variables: every one at once', async () => {
    const outcome = await start({
      PORT: 'eighty',
      TOLLGATE_ADMIN_TOKEN: 'short',
      TOLLGATE_DATA_DIR: dir,
    });
    expectCleanFailure(outcome);
    expect(outcome.errors).toEqual([
      'tollgate: invalid environment variables:',
      expect.stringMatching(/^ {2}PORT: /),
      '  TOLLGATE_ADMIN_TOKEN: must be at least 16 characters',
    ]);
  });

  describeNeeding(postgresService, 'on the local PostgreSQL', () => {
    it('a database that does not exist: names it and the command that creates it', async () => {
      const url = new URL(postgresService.url ?? '');
      const missing = `tollgate_missing_${randomBytes(4).toString('hex')}`;
      url.pathname = `/${missing}`;
      const outcome = await start({
        PORT: String(await freePort()),
        TOLLGATE_DATA_DIR: dir,
        TOLLGATE_DATABASE_URL: url.href,
      });
      expectCleanFailure(outcome);
      const address = `${url.hostname}:${url.port === '' ? 5432 : url.port}`;
      expect(outcome.errors).toHaveLength(1);
      expect(outcome.errors[0]).toMatch(
        new RegExp(
          `^tollgate: PostgreSQL database ${missing} does not exist on ${address.replaceAll('.', '\\.')}: create it \\(createdb .*${missing}\\) or check TOLLGATE_DATABASE_URL$`,
        ),
      );
    });
  });
});
