import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { NGINX_EXECUTABLE, NGINX_SNIPPET } from '../cluster/nginx.js';
import { nginxService } from '../cluster/programs.js';
import { describeNeeding } from '../helpers/required-services.js';

const run = promisify(execFile);
const examples = path.dirname(NGINX_SNIPPET);
const WHOLE = path.join(examples, 'nginx.conf');
const README = new URL('../../../../README.md', import.meta.url).pathname;

/** The ports a file names: `listen N` and `server 127.0.0.1:N`, or `127.0.0.1:N` and `PORT=N`. */
function portsIn(text: string, pattern: RegExp): Set<number> {
  return new Set([...text.matchAll(pattern)].map((match) => Number(match[1])));
}

/**
 * The risk: an operator copies examples/nginx/ and nginx refuses it. `tollgate.conf` is a
 * snippet of the http context, so `nginx -t` on it alone failed ("upstream" directive is not
 * allowed here); `nginx.conf` next to it is the whole configuration around it, checked here by
 * nginx itself, exactly as shipped (only where nginx writes its pid and error log is moved to a
 * temporary directory). Its ports also collided with the quick start's gateways (8080 and 8081):
 * starting nginx beside them failed with "Address already in use".
 */
describeNeeding(nginxService, 'examples/nginx', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('nginx.conf, with tollgate.conf included as shipped, passes nginx -t', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-nginx-t-'));
    const checked = await run(NGINX_EXECUTABLE, [
      '-t',
      '-p',
      dir,
      '-e',
      'stderr',
      '-g',
      `pid ${path.join(dir, 'nginx.pid')};`,
      '-c',
      WHOLE,
    ]);
    expect(checked.stderr).toContain('test is successful');
    expect(readFileSync(WHOLE, 'utf8')).toMatch(/^\s*include tollgate\.conf;$/m);
  });

  it('tollgate.conf alone is refused by nginx -t: it is a snippet, and says so', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-nginx-t-'));
    const refused = await run(NGINX_EXECUTABLE, [
      '-t',
      '-p',
      dir,
      '-e',
      'stderr',
      '-g',
      `pid ${path.join(dir, 'nginx.pid')};`,
      '-c',
      NGINX_SNIPPET,
    ]).then(
      () => undefined,
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toContain('"upstream" directive is not allowed here');
    expect(readFileSync(NGINX_SNIPPET, 'utf8')).toContain(
      'nginx -t -c "$PWD/examples/nginx/nginx.conf"',
    );
  });

  it("uses none of the quick start's ports", () => {
    const example = portsIn(
      readFileSync(NGINX_SNIPPET, 'utf8'),
      /^\s*(?:listen|server 127\.0\.0\.1:)\s*(\d+)/gm,
    );
    const quickStart = portsIn(readFileSync(README, 'utf8'), /(?:127\.0\.0\.1:|PORT=)(\d{4,5})\b/g);
    expect([...quickStart]).toEqual(expect.arrayContaining([8080, 8081]));
    expect(example.size).toBe(4);
    expect([...example].filter((port) => quickStart.has(port))).toEqual([]);
  });
});
