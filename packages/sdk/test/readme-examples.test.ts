import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/*
 * The risk: README examples that no longer compile or drift from the API. The examples live in
 * `examples/*.ts`, which the root typecheck compiles against the sources; this test keeps every
 * README block identical to its file, and every file shown.
 */

const root = new URL('../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const blocks = [
  ...readme.matchAll(/<!-- example: (examples\/[\w.-]+\.ts) -->\n```ts\n([\s\S]*?)\n```/g),
];

describe('README examples', () => {
  it('every example file is shown in the README', () => {
    const files = readdirSync(new URL('examples/', root)).filter((name) => name.endsWith('.ts'));
    expect(blocks.map((block) => block[1]).sort()).toEqual(
      files.map((name) => `examples/${name}`).sort(),
    );
  });

  it.each(blocks.map((block) => [block[1] ?? '', block[2] ?? '']))(
    '%s is identical to its file',
    (file, code) => {
      expect(code).toBe(readFileSync(new URL(file, root), 'utf8').replace(/\n$/, ''));
    },
  );
});
