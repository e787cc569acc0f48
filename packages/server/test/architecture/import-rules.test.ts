import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The shape of `packages/server/src` (docs/architecture.md, "Which way imports go"), checked on
 * the import graph read from the sources with TypeScript's own pre-processor (type-only imports
 * count: a type that runs both ways ties two files as much as a value does). The risk: the house
 * slips back, one convenient import at a time, into files that import each other and domain code
 * that reaches into the HTTP layer's bag of every service (`AppDeps`), and nobody sees it until
 * following one step means visiting a file eight times.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Each file (relative to src/) with the files of src/ it imports. */
function importGraph(): Map<string, Set<string>> {
  const files = sourceFiles(SRC).map((file) => path.relative(SRC, file));
  const known = new Set(files);
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const text = readFileSync(path.join(SRC, file), 'utf8');
    const imported = ts
      .preProcessFile(text, true, true)
      .importedFiles.map((entry) => entry.fileName);
    const targets = new Set<string>();
    for (const specifier of imported) {
      if (!specifier.startsWith('.')) continue;
      const target = path
        .normalize(path.join(path.dirname(file), specifier))
        .replace(/\.js$/, '.ts');
      if (known.has(target)) targets.add(target);
      else if (known.has(path.join(target, 'index.ts'))) targets.add(path.join(target, 'index.ts'));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The groups of files that import each other in a loop (Tarjan's strongly connected parts). */
function circles(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    order.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) ?? 0, order.get(next) ?? 0));
      }
    }
    if (low.get(file) !== order.get(file)) return;
    const group: string[] = [];
    for (;;) {
      const member = stack.pop() ?? file;
      onStack.delete(member);
      group.push(member);
      if (member === file) break;
    }
    if (group.length > 1) found.push(group.sort());
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  return found.sort((first, second) => (first[0] ?? '').localeCompare(second[0] ?? ''));
}

/**
 * Who may import `http/deps.ts` (`AppDeps`, everything the HTTP app is given): the HTTP layer,
 * the console's route files, and the composition root that builds it. A service names the few
 * things it needs in a deps interface of its own.
 */
const MAY_IMPORT_APP_DEPS = (file: string): boolean =>
  file.startsWith('http/') ||
  /^console\/(.*-routes|register-console|console-deps)\.ts$/.test(file) ||
  file === 'services.ts';

/**
 * Files below the HTTP layer that import from it anyway, each with why. Anything else under
 * src/ (but the console, the CLI, start-up and the composition root, which sit above it) must
 * not import from `http/`.
 */
const UPWARD_INTO_HTTP: Readonly<Record<string, string>> = {
  'tasks/task-step-kit.ts -> http/metrics.ts':
    'the type of the metrics the worker reports (its lag); the registry is built by the app',
  'shares/share-service.ts -> http/serve-content.ts':
    'the type of a served object (bytes and headers) a public share answers with',
};
const ABOVE_HTTP = /^(console|cli|startup)\/|^(services|main)\.ts$/;

describe('the import rules of packages/server/src', () => {
  const graph = importGraph();

  it('reads the whole source tree (the rules below would pass on an empty graph)', () => {
    expect(graph.size).toBeGreaterThan(300);
    expect(graph.get('http/app.ts')).toContain('http/deps.ts');
  });

  it('has no circle of files importing each other', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('lets only routes and the composition root import AppDeps (http/deps.ts)', () => {
    const importers = [...graph]
      .filter(([, targets]) => targets.has('http/deps.ts'))
      .map(([file]) => file);
    expect(importers.filter((file) => !MAY_IMPORT_APP_DEPS(file))).toEqual([]);
  });

  it('keeps domain code out of the HTTP layer, but the imports named with their reason', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      file.startsWith('http/') || ABOVE_HTTP.test(file)
        ? []
        : [...targets]
            .filter((target) => target.startsWith('http/'))
            .map((target) => `${file} -> ${target}`),
    );
    expect(upward.sort()).toEqual(Object.keys(UPWARD_INTO_HTTP).sort());
  });
});
