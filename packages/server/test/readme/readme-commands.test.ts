import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const main = path.join(repo, 'packages/server/dist/main.js');

/** The tools the README's "Requirements" lists for "Try it", with what npm start needs. */
const TOOLS = ['bash', 'curl', 'jq', 'node', 'npm', 'grep', 'mktemp', 'sed'];

/**
 * The balance "Try it" ends with, in micro-yuan, from the built-in configuration's prices and
 * the simulator's deterministic usage: the top-up of 10 000 000, less embeddings (1), rerank
 * (5), the 2 s video (40 000), the 256x256 image (10 000), and the H3 generate (80 000), its
 * regenerate (1 440 000) and the understand of that (306), as "Try it" prints them (rerank and
 * image excepted). Every hold is resolved, so nothing stays held. A change of default prices
 * or of the simulator's outputs changes what a newcomer sees: update the figure with it.
 */
const FINAL_BALANCE = 8_429_688;

/**
 * What makes the bash run strict where a person's paste is not: stop at the first command that
 * fails, naming it (also inside functions and `$(…)`), and make every HTTP error a failed
 * command (`curl --fail-with-body` keeps the body for the report). `npm ci` is not run (see the
 * test's comment), and nothing may install into the node_modules this checkout shares.
 */
const STRICT = String.raw`
set -eEo pipefail
shopt -s inherit_errexit
trap 'echo "README command failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
curl() { command curl --fail-with-body "$@"; }
npm() {
  case "$1" in
    ci) echo "(npm ci: the checkout is already installed)" ;;
    install | i | update | uninstall) echo "the test cannot run npm $1 (shared node_modules)" >&2; return 1 ;;
    *) command npm "$@" ;;
  esac
}
`;

/** The README section `## title`, up to the next `## ` heading. */
function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${title}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The ```bash blocks of the README section `## title`, in order. */
function bashBlocks(markdown: string, title: string): string[] {
  return [...section(markdown, title).matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map(
    (match) => match[1] ?? '',
  );
}

/** The balances "Try it" says its account prints show (`# … "balance": N …`), in order. */
function statedBalances(script: string): number[] {
  return [...script.matchAll(/^# .*"balance": (\d+)/gm)].map((match) => Number(match[1]));
}

/** The balances of the account objects "Try it" printed, in order. */
function printedBalances(stdout: string): number[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"object":"account"'))
    .map((line) => (JSON.parse(line) as { balance: number }).balance);
}

interface Run {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exit: Promise<number | null>;
}

/** Runs `script` with bash in its own process group, so everything it starts can be killed. */
function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Run {
  const child = spawn('bash', ['-c', script], { cwd, env, detached: true });
  const run: Run = {
    child,
    stdout: '',
    stderr: '',
    exit: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  child.stdout?.on('data', (chunk: Buffer) => void (run.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => void (run.stderr += chunk.toString()));
  return run;
}

/** Every process of the group `run` started (the gateways it left in the background too). */
function killGroup(run: Run, signal: NodeJS.Signals): void {
  try {
    if (run.child.pid !== undefined) process.kill(-run.child.pid, signal);
  } catch {
    // the group is already gone
  }
}

async function waitForServing(base: string, run: Run): Promise<void> {
  let exited = false;
  void run.exit.then(() => (exited = true));
  for (let attempt = 0; attempt < 300 && !exited; attempt += 1) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the quick start did not serve ${base}:\n${run.stdout}\n${run.stderr}`);
}

/** The environment of a new shell: none of this test run's Tollgate, port or npm settings. */
function freshEnvironment(dir: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(TOLLGATE_|LOG_|npm_|PORT$|HOST$|VITEST|NODE_ENV$|NODE_OPTIONS$)/i.test(name),
    ),
  );
  // `npm start` builds first (prestart). `npm test` has just built (pretest), and a second
  // build from inside the suite would race the other test files on dist/: skip it here.
  return { ...env, npm_config_ignore_scripts: 'true', TMPDIR: dir };
}

/**
 * The README is what a newcomer runs first; when it rots (a port taken by the quick start's
 * gateway, a placeholder, a file that does not exist, a tool not listed) nothing else they try
 * works. This test takes the ```bash blocks of "Quick start" and "Try it" out of README.md and
 * runs them with bash, as pasted, in a fresh directory.
 *
 * What is substituted, and why:
 * - The fresh directory is a checkout whose installed parts (package.json, packages/,
 *   node_modules/) are symlinks to this repository: `npm ci` takes minutes and would replace
 *   node_modules under the test files running beside this one. So `npm ci` is a no-op (a shell
 *   function), and `npm start` skips its build (see `freshEnvironment`).
 * - Ports: the quick start's gateway gets a free port through PORT (the README's 8080 may be
 *   taken on a CI machine), and "Try it"'s 8081 is replaced by another free port in its text.
 * - The run is strict (STRICT): each command must exit 0 and each HTTP call must succeed.
 * Everything else runs as written: the quick start's gateway stays up on its port while "Try
 * it" starts its own, as when a newcomer forgets to stop it; "Try it" takes its fresh data
 * directory from `mktemp -d` (under this test's directory).
 */
describe('the README quick start and "Try it", pasted into bash', () => {
  const runs: Run[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    for (const run of runs) killGroup(run, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const run of runs.splice(0)) killGroup(run, 'SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('lists every tool it needs, and they are installed', () => {
    const requirements = section(
      readFileSync(path.join(repo, 'README.md'), 'utf8'),
      'Requirements',
    );
    for (const tool of ['bash', 'curl', 'jq']) expect(requirements).toContain(`\`${tool}\``);
    const missing = TOOLS.filter(
      (tool) => spawnSync('bash', ['-c', `command -v ${tool}`]).status !== 0,
    );
    expect(missing, 'tools the README needs are missing on this machine').toEqual([]);
  });

  it(`serves, then "Try it" runs every command and ends with a balance of ${FINAL_BALANCE}`, async () => {
    if (!existsSync(main)) throw new Error('build first: npm test builds dist/');
    const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
    const quickStart = bashBlocks(readme, 'Quick start');
    const tryIt = bashBlocks(readme, 'Try it');
    expect(quickStart.join('\n')).toContain('npm start');
    expect(tryIt.length).toBeGreaterThanOrEqual(3);

    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-readme-'));
    for (const name of ['package.json', 'packages', 'node_modules'])
      symlinkSync(path.join(repo, name), path.join(dir, name));
    const env = freshEnvironment(dir);

    const quickPort = await freePort();
    const quick = runBash(`${STRICT}\n${quickStart.join('\n')}`, dir, {
      ...env,
      PORT: String(quickPort),
    });
    runs.push(quick);
    await waitForServing(`http://127.0.0.1:${quickPort}`, quick);
    expect(existsSync(path.join(dir, 'data', 'tollgate.sqlite'))).toBe(true);

    const tryPort = await freePort();
    const script = tryIt.join('\n');
    expect(script).toContain('PORT=8081');
    const tryRun = runBash(
      `${STRICT}\n${script.replaceAll(/\b8081\b/g, String(tryPort))}`,
      dir,
      env,
    );
    runs.push(tryRun);
    const code = await Promise.race([
      tryRun.exit,
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 100_000)),
    ]);
    const report = `exit ${String(code)}\n--- stderr\n${tryRun.stderr.slice(-3_000)}\n--- stdout (end)\n${tryRun.stdout.slice(-3_000)}`;
    expect(code, report).toBe(0);
    expect(tryRun.stderr, report).not.toContain('README command failed');

    // The last command prints the account, as the README says.
    const lastLine = tryRun.stdout.trim().split('\n').at(-1) ?? '';
    const account = JSON.parse(lastLine) as { object: string; balance: number; held: number };
    expect(account).toMatchObject({ object: 'account', balance: FINAL_BALANCE, held: 0 });
    // The balances the README says each account print shows are the ones printed, in order.
    expect(statedBalances(script)).toEqual(printedBalances(tryRun.stdout));
    expect(statedBalances(script).at(-1)).toBe(FINAL_BALANCE);

    // The fetched files land in the fresh data directory, never in the checkout.
    const data = readdirSync(dir)
      .map((name) => path.join(dir ?? '', name))
      .find((entry) => existsSync(path.join(entry, 'tollgate.log')));
    if (data === undefined) throw new Error('no data directory with tollgate.log under TMPDIR');
    for (const file of ['waves.mp4', 'fox.png', 'lighthouse.mp4']) {
      expect(statSync(path.join(data, file)).size, file).toBeGreaterThan(0);
      expect(existsSync(path.join(dir, file)), `${file} in the checkout`).toBe(false);
    }

    // The quick start's gateway served all along, untouched by "Try it".
    expect((await fetch(`http://127.0.0.1:${quickPort}/healthz`)).ok).toBe(true);
  }, 150_000);
});
