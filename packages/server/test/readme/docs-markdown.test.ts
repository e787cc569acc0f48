import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const DOCS = [
  'README.md',
  ...readdirSync(path.join(repo, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The lines of a Markdown file outside fenced code blocks, with their line numbers (from 1). */
function proseLines(markdown: string): { line: number; text: string }[] {
  let fenced = false;
  const lines: { line: number; text: string }[] = [];
  markdown.split('\n').forEach((text, index) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    else if (!fenced) lines.push({ line: index + 1, text });
  });
  return lines;
}

/**
 * Rows cut off from their table: every run of `|` lines must open with a header row and its
 * `| --- |` separator, else Markdown renders the rows after a blank line as a paragraph of pipes.
 */
function tablesWithoutHeader(markdown: string): number[] {
  const lines = proseLines(markdown);
  const broken: number[] = [];
  lines.forEach((current, index) => {
    const isRow = (entry: { text: string } | undefined) => entry?.text.trimStart().startsWith('|');
    const previous = lines[index - 1];
    const startsRun = isRow(current) && !(isRow(previous) && previous?.line === current.line - 1);
    if (!startsRun) return;
    const next = lines[index + 1];
    if (next === undefined || !/^\s*\|(\s*:?-{3,}:?\s*\|)+\s*$/.test(next.text))
      broken.push(current.line);
  });
  return broken;
}

/**
 * A clause (split at `.`, `;` and `:`) of five words or more said twice in one paragraph: what a
 * sentence pasted over its own older version leaves behind.
 */
function repeatedClauses(markdown: string): string[] {
  const paragraphs: string[] = [];
  let current: string[] = [];
  for (const { text } of proseLines(markdown)) {
    if (text.trim() === '' || text.trimStart().startsWith('|') || text.startsWith('#')) {
      paragraphs.push(current.join(' '));
      current = [];
    } else current.push(text.trim());
  }
  paragraphs.push(current.join(' '));
  const repeated: string[] = [];
  for (const paragraph of paragraphs) {
    const seen = new Set<string>();
    for (const clause of paragraph.split(/(?<=[.;:])\s+/)) {
      const normal = clause.toLowerCase().replace(/\s+/g, ' ').trim();
      if (normal.split(' ').length < 5) continue;
      if (seen.has(normal)) repeated.push(clause);
      seen.add(normal);
    }
  }
  return repeated;
}

/**
 * The risk: documentation that renders broken, or reads as a draft — a table split in two (its
 * second half shown as a paragraph of pipes) and a sentence left twice, as docs/console.md had.
 */
describe('the documentation renders as written', () => {
  it.each(DOCS)('%s: every table keeps its header', (file) => {
    expect(tablesWithoutHeader(readFileSync(path.join(repo, file), 'utf8'))).toEqual([]);
  });

  it.each(DOCS)('%s: no clause is said twice in one paragraph', (file) => {
    expect(repeatedClauses(readFileSync(path.join(repo, file), 'utf8'))).toEqual([]);
  });
});

/**
 * The risk: a newcomer's first `npm ci` prints a warning the README does not announce, and they
 * stop there. npm 11 warns about every dependency whose install scripts the project has not
 * listed in `allowScripts` (`npm warn install-scripts …`); the README names that warning and
 * each such dependency (from package-lock.json), with why it is harmless.
 */
describe("the README's expected warnings of npm ci", () => {
  it('names the install-scripts warning and every dependency with install scripts', () => {
    const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
    const requirements = readme.slice(
      readme.indexOf('## Requirements'),
      readme.indexOf('## Quick start'),
    );
    const lock = JSON.parse(readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    expect(requirements).toContain('npm warn install-scripts');
    expect(requirements).toContain('npm install-scripts ls');
    for (const name of withScripts) expect(requirements).toContain(`\`${name}\``);
    // And why it is harmless: the scripts ran.
    expect(requirements).toContain('better-sqlite3/build/Release/better_sqlite3.node');
  });
});
