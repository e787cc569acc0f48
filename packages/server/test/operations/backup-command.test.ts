import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadShareLinkSecret } from '../../src/shares/share-link-secret.js';
import { cliWithEnv } from '../helpers/processes.js';

/** Runs one CLI command in this process; its exit code and both outputs. */
async function cli(env: NodeJS.ProcessEnv, ...args: string[]) {
  const { code, stdout, stderr } = await cliWithEnv(env, ...args);
  return { code, out: stdout, err: stderr };
}

/**
 * `tollgate backup` refuses what it must not do, saying so in the CLI's error shape and writing
 * nothing: no FILE, an existing FILE (a backup never overwrites another), no database to copy
 * (it must not create an empty one), and PostgreSQL (pg_dump's job). The copy under load is
 * tested in sqlite-backup-under-load.test.ts.
 */
describe('tollgate backup: what it refuses', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const fresh = () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-backup-command-'));
    return { TOLLGATE_DATA_DIR: dir };
  };

  it('without --to: INVALID_INPUT naming to', async () => {
    const env = fresh();
    await cli(env, 'accounts', 'create', '--email', 'a@example.test');
    const result = await cli(env, 'backup');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.err)).toEqual({
      error: {
        code: 'INVALID_INPUT',
        message: '--to FILE is required: where to write the copy',
        param: 'to',
      },
    });
  });

  it('an existing FILE: refused and left as it was', async () => {
    const env = fresh();
    await cli(env, 'accounts', 'create', '--email', 'a@example.test');
    const file = path.join(dir, 'earlier-backup.sqlite');
    writeFileSync(file, 'an earlier backup');
    const result = await cli(env, 'backup', '--to', file);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.err)).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'to' } });
    expect(readFileSync(file, 'utf8')).toBe('an earlier backup');
  });

  it('no database at the source: NOT_FOUND, and no empty database created', async () => {
    const env = fresh();
    const file = path.join(dir, 'backup.sqlite');
    const result = await cli(env, 'backup', '--to', file);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.err)).toMatchObject({ error: { code: 'NOT_FOUND' } });
    expect(existsSync(path.join(dir, 'tollgate.sqlite'))).toBe(false);
    expect(existsSync(file)).toBe(false);
  });

  it('on PostgreSQL: refused with a message pointing to pg_dump, without connecting', async () => {
    const env = fresh();
    const file = path.join(dir, 'backup.sqlite');
    const result = await cli(
      { ...env, TOLLGATE_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/tollgate' },
      'backup',
      '--to',
      file,
    );
    expect(result.code).toBe(1);
    expect(JSON.parse(result.err)).toEqual({
      error: {
        code: 'INVALID_INPUT',
        message:
          'tollgate backup copies a SQLite database, and this one is PostgreSQL (tollgate at ' +
          '127.0.0.1:1): back it up with pg_dump (docs/operations.md, "Backup and restore")',
      },
    });
    expect(existsSync(file)).toBe(false);
  });
});

/**
 * The risk: a restore from `tollgate backup` alone loses what the database copy does not hold.
 * The share-link secret (`<data dir>/share-link-secret`, kept out of the database on purpose)
 * keys every public link asked for from the console: a restored gateway without it generates a
 * new one and shows `null` for every approved link. The backup names it, and the local asset
 * files, beside the copy it made; and the documented procedure copies them.
 */
describe('tollgate backup: what the copy does not hold', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the share-link secret and the asset files to copy beside the database', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-backup-also-'));
    const env = { TOLLGATE_DATA_DIR: dir };
    await cli(env, 'accounts', 'create', '--email', 'a@example.test');
    // What a gateway started on this data directory leaves there.
    await loadShareLinkSecret({ fromEnvironment: undefined, dataDir: dir });
    mkdirSync(path.join(dir, 'assets'));
    const file = path.join(dir, 'backup.sqlite');
    const result = await cli(env, 'backup', '--to', file);
    expect(result.code, result.err).toBe(0);
    expect(JSON.parse(result.out)).toMatchObject({
      object: 'backup',
      integrity: 'ok',
      also_copy: [path.join(dir, 'share-link-secret'), path.join(dir, 'assets')],
    });
    // A secret given by the environment is the operator's to keep: no file is named.
    const fromEnvironment = await cli(
      { ...env, TOLLGATE_SHARE_LINK_SECRET: 'x'.repeat(40) },
      'backup',
      '--to',
      path.join(dir, 'second.sqlite'),
    );
    expect(JSON.parse(fromEnvironment.out)).toMatchObject({
      also_copy: [path.join(dir, 'assets')],
    });
  });

  it('docs/operations.md backs up and restores the share-link secret with the database', () => {
    const operations = readFileSync(
      new URL('../../../../docs/operations.md', import.meta.url),
      'utf8',
    );
    const sqlite = operations.slice(
      operations.indexOf('### SQLite: `tollgate backup --to FILE`'),
      operations.indexOf('### PostgreSQL: `pg_dump`'),
    );
    const [backup, restore] = [...sqlite.matchAll(/```bash\n([\s\S]*?)```/g)].map(
      (block) => block[1] ?? '',
    );
    expect(backup).toContain('share-link-secret');
    expect(restore).toContain('share-link-secret');
  });
});
