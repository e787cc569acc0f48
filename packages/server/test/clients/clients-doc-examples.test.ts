import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/*
 * Risk: docs/clients.md shows recipes that differ from the ones the client tests run. Every
 * marked block must be identical to its file, and every recipe file must be shown.
 */

const root = new URL('../../../../', import.meta.url);
const doc = readFileSync(new URL('docs/clients.md', root), 'utf8');
// TypeScript recipes in ```ts blocks, plain JavaScript ones (.mjs) in ```js blocks.
const blocks = [
  ...doc.matchAll(/<!-- example: ([\w./-]+\.(?:ts|mjs)) -->\n```(?:ts|js)\n([\s\S]*?)\n```/g),
];

describe('docs/clients.md recipes', () => {
  it('every recipe file is shown', () => {
    const recipes = readdirSync(new URL('recipes/', import.meta.url))
      .filter((name) => name.endsWith('.ts') || name.endsWith('.mjs'))
      .map((name) => `packages/server/test/clients/recipes/${name}`);
    expect(blocks.map((block) => block[1]).filter((file) => recipes.includes(file ?? ''))).toEqual(
      expect.arrayContaining(recipes),
    );
    expect(recipes.length).toBeGreaterThan(0);
  });

  it.each(blocks.map((block) => [block[1] ?? '', block[2] ?? '']))(
    '%s is identical to its file',
    (file, code) => {
      expect(code).toBe(readFileSync(new URL(file, root), 'utf8').replace(/\n$/, ''));
    },
  );
});
