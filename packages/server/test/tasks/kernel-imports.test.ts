import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const KERNEL = join(SOURCE, 'tasks');
/** Where task families live (registered in services.ts); the kernel reaches none of them. */
const FAMILY_FOLDERS = ['families', 'h3'].map((folder) => join(SOURCE, folder));
/** The families' pricing rules, which live beside the ledger in billing/: the kernel reaches none. */
const FAMILY_MODULES = ['billing/task-pricing.ts', 'billing/h3-pricing.ts'].map((file) =>
  join(SOURCE, file),
);
/** The kinds of the families this build registers: the kernel never compares a kind with one. */
const FAMILY_KINDS = ['image', 'video', 'h3'];

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(folder, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(folder, entry.name)]
        : [],
  );

/** The source files a file imports (relative specifiers only; `.js` spelled, `.ts` on disk). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(
    (match) => match[1] ?? '',
  );
  return specifiers
    .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts'))
    .filter((path) => existsSync(path));
}

/** Every source file reachable from the kernel's files, with the chain that reaches it. */
function reachableFromKernel(): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  const queue = sourceFiles(KERNEL).map((file) => [file]);
  while (queue.length > 0) {
    const chain = queue.shift() ?? [];
    const file = chain[chain.length - 1] ?? '';
    if (chains.has(file)) continue;
    chains.set(file, chain);
    for (const next of importsOf(file)) if (!chains.has(next)) queue.push([...chain, next]);
  }
  return chains;
}

/**
 * Issue 18, Found 9 / Deliver 6: the task kernel (src/tasks/) knows no task family. A family
 * plugs in through tasks/task-family.ts and is registered in services.ts; were the kernel to
 * import one (even through another module) or branch on a family's kind, adding a family would
 * mean changing the kernel again.
 */
describe('the task kernel', () => {
  it('reaches no task family through its imports, directly or through other modules', () => {
    const offending = [...reachableFromKernel()]
      .filter(
        ([file]) =>
          FAMILY_FOLDERS.some((folder) => file.startsWith(`${folder}/`)) ||
          FAMILY_MODULES.includes(file),
      )
      .map(([, chain]) => chain.map((file) => relative(SOURCE, file)).join(' -> '));
    expect(offending).toEqual([]);
  });

  it("never compares a task's kind with a family's kind", () => {
    const pattern = new RegExp(`kind\\s*[!=]==?\\s*'(${FAMILY_KINDS.join('|')})'`);
    const offending = sourceFiles(KERNEL).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          pattern.test(line) ? [`${relative(SOURCE, file)}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(offending).toEqual([]);
  });

  it('is read by this test at all (the kernel folder has its files)', () => {
    // Guards the two tests above against passing on an empty or moved folder.
    expect(sourceFiles(KERNEL).map((file) => relative(KERNEL, file))).toContain('task-steps.ts');
    expect(reachableFromKernel().size).toBeGreaterThan(sourceFiles(KERNEL).length);
    for (const file of FAMILY_MODULES) expect(existsSync(file), file).toBe(true);
  });
});
