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
 * Who may import `http/deps.ts` (`AppDeps`, everything the HTTP app is given): the HTTP layer
 * (the console's routes included) and the composition root that builds it. A service names the few
 * things it needs in a deps interface of its own.
 */
const MAY_IMPORT_APP_DEPS = (file: string): boolean =>
  file.startsWith('http/') || file === 'services.ts';

/**
 * The layers of packages/server/src, top to bottom (docs/architecture.md, "Which way imports go"),
 * each with its rooms (a folder directly under src/, or a file there) in order: a room imports
 * only rooms listed after it, in its own layer or a lower one. A new folder must be placed here
 * on purpose.
 */
const LAYERS: readonly (readonly [layer: string, rooms: readonly string[]])[] = [
  ['process', ['cli', 'main.ts', 'maintenance', 'startup']],
  ['composition root', ['services.ts']],
  ['routes', ['http']],
  [
    'services',
    [
      'operator',
      'users',
      'usage',
      'shares',
      'h3',
      'families',
      'uploads',
      'tasks',
      'requests',
      'routing',
      'simulator',
      'providers',
      'chat',
      'models',
      'logger.ts',
      'log-redaction.ts',
      'auth',
      'payments',
      'accounts',
      'assets',
    ],
  ],
  ['money and records', ['billing', 'budgets', 'audit', 'events']],
  ['ground', ['config', 'util', 'errors', 'net']],
  ['database', ['store']],
];

/**
 * Imports that run against the layers or round a loop of rooms anyway, each with why. At most ten
 * (issue 38); each is a known debt, not a pattern to copy.
 */
const AGAINST_THE_LAYERS: Readonly<Record<string, string>> = {};

/** The room of a file: its folder directly under src/, or the file itself at src/'s top. */
const roomOf = (file: string): string => file.split('/')[0] ?? file;

/** Each room's place, top to bottom. */
const PLACE_OF = new Map(LAYERS.flatMap(([, rooms]) => rooms).map((room, index) => [room, index]));

/** The rooms' graph: which room imports which, the excused imports left out. */
function roomGraph(graph: Map<string, Set<string>>): Map<string, Set<string>> {
  const rooms = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = roomOf(file);
    const edges = rooms.get(from) ?? new Set<string>();
    rooms.set(from, edges);
    for (const target of targets) {
      const to = roomOf(target);
      if (to !== from && !(`${file} -> ${target}` in AGAINST_THE_LAYERS)) edges.add(to);
    }
  }
  return rooms;
}

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

  it('places every room of src/ in a layer', () => {
    const unplaced = [...new Set([...graph.keys()].map(roomOf))].filter(
      (room) => !PLACE_OF.has(room),
    );
    expect(unplaced).toEqual([]);
  });

  it('imports only rooms placed below, but the imports named with their reason', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      [...targets]
        .filter((target) => (PLACE_OF.get(roomOf(target)) ?? 0) < (PLACE_OF.get(roomOf(file)) ?? 0))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward.filter((entry) => !(entry in AGAINST_THE_LAYERS))).toEqual([]);
  });

  it('has rooms whose imports run one way (no loop of folders), the named imports aside', () => {
    expect(circles(roomGraph(graph))).toEqual([]);
  });

  it('names at most ten imports against the layers, each still in the code', () => {
    const excused = Object.keys(AGAINST_THE_LAYERS);
    expect(excused.length).toBeLessThanOrEqual(10);
    const present = excused.filter((entry) => {
      const [file = '', target = ''] = entry.split(' -> ');
      return graph.get(file)?.has(target) === true;
    });
    expect(present).toEqual(excused);
  });
});
