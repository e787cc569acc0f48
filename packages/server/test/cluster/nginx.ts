import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../helpers/processes.js';

/** The tested configuration file operators install (docs/deploy.md). */
export const NGINX_SNIPPET = new URL('../../../../examples/nginx/tollgate.conf', import.meta.url)
  .pathname;

/** Debian's nginx (`nginx-light`, installed by `.ci/run`). */
export const NGINX_EXECUTABLE = '/usr/sbin/nginx';

export interface RunningNginx {
  /** `http://127.0.0.1:<port>`: the one address clients use. */
  readonly base: string;
  stop(): Promise<void>;
}

/**
 * The repository's snippet with only its addresses changed: the instance lines of the upstream
 * block become `gatewayPorts`, and `listen` the port nginx serves on. Everything else (buffering,
 * body limits, timeouts, keep-alive) is exactly what operators install. Throws when the snippet no
 * longer has the lines it rewrites, so a renamed directive cannot make the battery test another file.
 */
export function snippetFor(snippet: string, gatewayPorts: number[], listenPort: number): string {
  const instanceLine = /^ *server 127\.0\.0\.1:809\d( [^;]*)?;\n/gm;
  const instances = [...snippet.matchAll(instanceLine)];
  const first = instances[0];
  if (first === undefined || !/^ *listen 8090;$/m.test(snippet))
    throw new Error('examples/nginx/tollgate.conf lost its instance or listen lines');
  const options = first[1] ?? '';
  const lines = gatewayPorts.map((port) => `    server 127.0.0.1:${port}${options};\n`).join('');
  let replaced = false;
  return snippet
    .replace(instanceLine, () => {
      if (replaced) return '';
      replaced = true;
      return lines;
    })
    .replace(/^( *)listen 8090;$/m, `$1listen 127.0.0.1:${listenPort};`);
}

/**
 * Runs nginx as a child of the test (not a daemon), with its prefix, pid file, logs and temp
 * paths under `directory`, around the repository's snippet. Resolves once it answers.
 */
export async function startNginx(directory: string, gatewayPorts: number[]): Promise<RunningNginx> {
  const port = await freePort();
  mkdirSync(path.join(directory, 'logs'), { recursive: true });
  mkdirSync(path.join(directory, 'temp'), { recursive: true });
  writeFileSync(
    path.join(directory, 'tollgate.conf'),
    snippetFor(readFileSync(NGINX_SNIPPET, 'utf8'), gatewayPorts, port),
  );
  const temp = (name: string) => `${name}_temp_path ${path.join(directory, 'temp', name)};`;
  writeFileSync(
    path.join(directory, 'nginx.conf'),
    [
      // As root, nginx's workers would run as `nobody`, who cannot enter the test's 0700 temp dir.
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'worker_processes 1;',
      `pid ${path.join(directory, 'nginx.pid')};`,
      `error_log ${path.join(directory, 'logs', 'error.log')} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      `  access_log off;`,
      `  ${temp('client_body')}`,
      `  ${temp('proxy')}`,
      `  ${temp('fastcgi')}`,
      `  ${temp('uwsgi')}`,
      `  ${temp('scgi')}`,
      `  include ${path.join(directory, 'tollgate.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    NGINX_EXECUTABLE,
    ['-p', directory, '-c', path.join(directory, 'nginx.conf'), '-g', 'daemon off;'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    try {
      await fetch(`${base}/healthz`);
      break;
    } catch {
      if (attempt > 100) throw new Error('nginx did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    base,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
