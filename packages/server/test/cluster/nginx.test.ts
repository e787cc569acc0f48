import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NGINX_SNIPPET, snippetFor } from './nginx.js';

/**
 * The battery runs nginx with the repository's file, changing only its addresses; if the file
 * lost the lines it rewrites, the battery would quietly test something else.
 */
describe('examples/nginx/tollgate.conf as the battery runs it', () => {
  const snippet = readFileSync(NGINX_SNIPPET, 'utf8');

  it('rewrites only the instance lines and the listen port', () => {
    const rewritten = snippetFor(snippet, [4001, 4002, 4003], 5000);
    expect(rewritten.match(/server 127\.0\.0\.1:\d+ max_fails=1 fail_timeout=2s;/g)).toEqual([
      'server 127.0.0.1:4001 max_fails=1 fail_timeout=2s;',
      'server 127.0.0.1:4002 max_fails=1 fail_timeout=2s;',
      'server 127.0.0.1:4003 max_fails=1 fail_timeout=2s;',
    ]);
    expect(rewritten).toContain('listen 127.0.0.1:5000;');
    const unchanged = (text: string) =>
      text.split('\n').filter((line) => !/server 127\.0\.0\.1|listen /.test(line));
    expect(unchanged(rewritten)).toEqual(unchanged(snippet));
  });

  it('keeps the directives the deployment relies on', () => {
    for (const directive of [
      'proxy_buffering off;',
      'proxy_request_buffering off;',
      'proxy_set_header Connection "";',
      'keepalive_timeout 4s;',
      'client_max_body_size 1g;',
    ])
      expect(snippet).toContain(directive);
  });

  it('refuses a file without the lines it rewrites', () => {
    expect(() => snippetFor(snippet.replace('listen 8090;', 'listen 80;'), [1], 2)).toThrow(
      /lost its instance or listen lines/,
    );
  });
});
