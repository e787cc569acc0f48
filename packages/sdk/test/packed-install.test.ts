import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, liveGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The risk: the SDK works inside the repository (its sources, the workspace's node_modules)
 * but not as the package a user installs — dist not built, a runtime dependency not packed (a
 * private workspace package, a library), a declaration importing something the user cannot
 * have, an `exports` path that does not exist. This is what the README's install line says:
 * `npm pack` in packages/sdk, the tarball installed OFFLINE into a project outside the
 * repository (so it can need nothing else), an ESM script there calling a live gateway, and a
 * TypeScript file there checked against the installed declarations.
 */

const run = promisify(execFile);
const sdkDir = fileURLToPath(new URL('..', import.meta.url));
const repository = path.resolve(sdkDir, '../..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

let scratch: string;
let project: string;
let tarball: string;
let gateway: TestGateway | undefined;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'tollgate-packed-'));
  project = path.join(scratch, 'app');
  mkdirSync(project);
  // `prepack` builds dist (tsc declarations, esbuild bundle) before packing.
  const packed = await run('npm', ['pack', '--json', '--pack-destination', scratch], {
    cwd: sdkDir,
  });
  const [entry] = JSON.parse(packed.stdout) as [{ filename: string }];
  tarball = path.join(scratch, entry.filename);

  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }),
  );
  // An empty cache and --offline: the tarball must install with nothing else.
  await run(
    'npm',
    [
      'install',
      tarball,
      '--offline',
      '--cache',
      path.join(scratch, 'npm-cache'),
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
    ],
    { cwd: project },
  );
}, 240_000);

afterAll(async () => {
  await gateway?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the packed SDK, installed in a project outside the repository', () => {
  it('installs from its tarball alone: no dependency, nothing from the repository', () => {
    expect(path.relative(repository, project).startsWith('..')).toBe(true);
    expect(path.basename(tarball)).toBe('tollgate-sdk-0.1.0.tgz');
    expect(
      readdirSync(path.join(project, 'node_modules')).filter((name) => !name.startsWith('.')),
    ).toEqual(['@tollgate']);
    expect(readdirSync(path.join(project, 'node_modules/@tollgate'))).toEqual(['sdk']);
  });

  it('an ESM script imports { Tollgate } and calls a gateway', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const idempotencyKey = crypto.randomUUID();
    writeFileSync(
      path.join(project, 'use.mjs'),
      `import { Tollgate, AbortedError, TollgateError } from '@tollgate/sdk';
import { FileJournal } from '@tollgate/sdk/file-journal';

const client = new Tollgate({
  baseURL: process.env.TOLLGATE_BASE_URL,
  apiKey: process.env.TOLLGATE_API_KEY,
  journal: new FileJournal('./journal.jsonl'),
});
const models = await client.models.list();
const body = { model: 'sim-chat', messages: [{ role: 'user', content: 'hello from outside' }] };
const options = { idempotencyKey: process.env.KEY };
const first = await client.chat.completions.create(body, options);
const again = await client.chat.completions.create(body, options);
const aborted = await client.account.get({ signal: AbortSignal.abort() }).catch((error) => error);
console.log(JSON.stringify({
  models: models.data.map((model) => model.id),
  reply: first.choices[0].message.content,
  sameAnswer: again.id === first.id,
  journal: (await client.journal.read(process.env.KEY))?.state,
  aborted: aborted instanceof AbortedError && aborted instanceof TollgateError,
}));
`,
    );
    const { stdout } = await run('node', ['use.mjs'], {
      cwd: project,
      env: {
        ...process.env,
        TOLLGATE_BASE_URL: live.baseURL,
        TOLLGATE_API_KEY: key,
        KEY: idempotencyKey,
      },
    });
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result).toMatchObject({
      reply: 'Simulated reply to: hello from outside',
      sameAnswer: true,
      journal: 'answered',
      aborted: true,
    });
    expect(result['models']).toContain('sim-chat');
    // One request on the gateway for the key, billed once.
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(record.json<{ status: string }>().status).toBe('succeeded');
    expect(await countRows(gateway, 'requests')).toBe(1);
    await gateway.expectLedgerClean();
  });

  it("the README's first call runs as written, in a new project, on this Node", async () => {
    // The README's own text: its setup command, its script and the command that runs it.
    const readme = readFileSync(path.join(sdkDir, 'README.md'), 'utf8');
    const setup = /```sh\ncd \/path\/to\/your-project\n(npm pkg set type=module)\n```/.exec(readme);
    const script = /<!-- first call: ([\w.-]+) -->\n```js\n([\s\S]*?)```/.exec(readme);
    const command = /```sh\nTOLLGATE_API_KEY=tgk_… (node [\w.-]+)\n```/.exec(readme);
    if (setup?.[1] === undefined || script?.[1] === undefined || command?.[1] === undefined)
      throw new Error('README "Start" lost its first call (setup, script or run command)');
    expect(command[1]).toBe(`node ${script[1]}`);

    // A project as `npm init` leaves it (no "type"), with the installed package.
    const fresh = path.join(scratch, 'first-call');
    mkdirSync(fresh);
    writeFileSync(path.join(fresh, 'package.json'), JSON.stringify({ name: 'first-call' }));
    symlinkSync(path.join(project, 'node_modules'), path.join(fresh, 'node_modules'), 'dir');
    const [npm, ...npmArgs] = setup[1].split(' ');
    await run(npm ?? 'npm', npmArgs, { cwd: fresh });
    writeFileSync(path.join(fresh, script[1]), script[2] ?? '');

    const live = await liveGateway();
    try {
      const { key } = await live.gateway.account(1_000_000);
      const [node, ...nodeArgs] = command[1].split(' ');
      const ran = await run(node === 'node' ? process.execPath : (node ?? ''), nodeArgs, {
        cwd: fresh,
        env: { ...process.env, TOLLGATE_BASE_URL: live.baseURL, TOLLGATE_API_KEY: key },
      });
      expect(ran.stdout).toContain("'sim-chat'");
      expect(ran.stdout.trim()).toMatch(/ 1000000$/);
      // Loaded as the ES module it is: no "Module type … is not specified" warning.
      expect(ran.stderr).toBe('');
    } finally {
      await live.gateway.close();
    }
  });

  it("a TypeScript file type-checks against the installed package's declarations", async () => {
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2022', 'dom', 'dom.iterable'],
          types: [],
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          // The package's own declarations are checked too, not skipped.
          skipLibCheck: false,
        },
        files: ['check.ts'],
      }),
    );
    writeFileSync(
      path.join(project, 'check.ts'),
      `import {
  AbortedError,
  OutcomeUnknownError,
  Tollgate,
  type ChatCompletion,
  type ModelList,
  type RequestRecord,
} from '@tollgate/sdk';

const client = new Tollgate({ baseURL: 'http://127.0.0.1:8080/v1', apiKey: 'tgk_example' });

export async function ask(question: string): Promise<string | null | undefined> {
  const models: ModelList = await client.models.list();
  if (!models.data.some((model) => model.id === 'sim-chat')) return undefined;
  try {
    const completion: ChatCompletion = await client.chat.completions.create(
      { model: 'sim-chat', messages: [{ role: 'user', content: question }] },
      { idempotencyKey: crypto.randomUUID(), signal: AbortSignal.timeout(10_000) },
    );
    return completion.choices[0]?.message.content;
  } catch (error) {
    if (!(error instanceof OutcomeUnknownError || error instanceof AbortedError)) throw error;
    const key: string | undefined = error.idempotencyKey;
    if (key === undefined) throw error;
    const record: RequestRecord = await client.requests.recover(key);
    return record.status;
  }
}

// @ts-expect-error the declarations are real types, not any: a misspelt field is an error
void client.chat.completions.create({ model: 'sim-chat', mesages: [] });
`,
    );
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: project,
    }).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout ?? error.message,
    );
    expect(checked).toBe('');
  }, 120_000);
});
