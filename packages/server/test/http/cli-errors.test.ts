import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cliRawIn } from '../helpers/processes.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-cli-errors-'));
const cli = (...args: string[]) => cliRawIn(dataDir, ...args);

/** The one error shape of the CLI: one JSON line on stderr, nothing on stdout, exit 1. */
async function expectJsonError(args: string[], message: RegExp): Promise<void> {
  const result = await cli(...args);
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr.endsWith('\n')).toBe(true);
  const body = JSON.parse(result.stderr) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe('INVALID_INPUT');
  expect(body.error.message).toMatch(message);
}

/**
 * The risk: operators script the CLI and parse its errors as JSON (docs/admin.md), but a mistyped
 * option or command printed Node's prose (with a stray quote) or a stack; `accounts show` with
 * no id looked up an account called "show"; `tasks resolve X --attach` with no value printed
 * Node's argument error. Every error is `{"error": {"code", "message"}}` on stderr, exit 1.
 */
describe('tollgate CLI errors', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('an unknown option is the JSON error naming it', async () => {
    await expectJsonError(
      ['accounts', 'show', 'acct_x', '--emial', 'a@b.cc'],
      /unknown option --emial/,
    );
    await expectJsonError(['-x'], /unknown option -x/);
  });

  it('an option the command does not take is the JSON error naming both', async () => {
    await expectJsonError(
      ['keys', 'list', 'acct_x', '--email', 'a@b.cc'],
      /--email is not an option of "keys list"/,
    );
  });

  it('an unknown command or subcommand is the JSON error (the subcommands listed)', async () => {
    await expectJsonError(['frobnicate'], /unknown command "frobnicate"/);
    await expectJsonError(
      ['keys', 'frobnicate'],
      /unknown command "keys frobnicate"; keys has: create, list, disable, rotate/,
    );
  });

  it('a --json that is not JSON is the JSON error naming --json', async () => {
    await expectJsonError(
      ['prices', 'set', 'sim-chat', '--json', '{"input'],
      /--json is not valid JSON/,
    );
  });

  it('accounts show without an id says the id is missing', async () => {
    await expectJsonError(['accounts', 'show'], /ACCOUNT_ID is missing/);
  });

  it("--attach with no value is the JSON error, not Node's argument error", async () => {
    await expectJsonError(['tasks', 'resolve', 'task_x', '--attach'], /--attach needs a value/);
    await expectJsonError(
      ['tasks', 'resolve', 'task_x', '--attach', '--reason', 'lost'],
      /--attach needs a value/,
    );
  });

  it('an extra argument is refused, not ignored', async () => {
    await expectJsonError(['keys', 'list', 'acct_a', 'acct_b'], /unexpected argument "acct_b"/);
  });

  it('a command group alone lists its subcommands, for every group', async () => {
    for (const [group, subcommands] of [
      ['keys', ['create', 'list', 'disable', 'rotate']],
      ['accounts', ['create', 'show', 'list']],
      ['tasks', ['list', 'show', 'resolve']],
      ['requests', ['show', 'resolve', 'flagged', 'review-usage']],
      ['shares', ['list', 'show', 'approve', 'reject', 'revoke']],
      ['prices', ['set', 'history']],
      ['codes', ['create', 'redeem']],
      ['ledger', ['check']],
    ] as const) {
      const result = await cli(group);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('');
      for (const subcommand of subcommands)
        expect(result.stdout).toContain(`tollgate ${group} ${subcommand}`);
    }
  });

  it('--version prints the package version', async () => {
    const manifest = JSON.parse(
      readFileSync(
        path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json'),
        'utf8',
      ),
    ) as { version: string };
    const result = await cli('--version');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ version: manifest.version });
  });

  it('a usage error opens no database', async () => {
    await cli('accounts', 'show');
    await cli('--bogus');
    expect(existsSync(path.join(dataDir, 'tollgate.sqlite'))).toBe(false);
  });
});

/** docs/admin.md lists every command the CLI has (the usage is made from the command table). */
describe('docs/admin.md and the CLI usage', () => {
  it('lists every command of `tollgate --help`', async () => {
    const doc = readFileSync(
      path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../docs/admin.md'),
      'utf8',
    );
    const usage = (await cli('--help')).stdout;
    const commands = [...usage.matchAll(/^ {2}tollgate ([a-z-]+(?: [a-z-]+)?)/gm)].map(
      (match) => match[1] ?? '',
    );
    expect(commands.length).toBeGreaterThan(20);
    for (const command of commands) expect(doc).toContain(`tollgate ${command}`);
  });
});
