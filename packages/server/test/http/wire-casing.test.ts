import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The risk: a new wire field in camelCase (or any third spelling) beside the snake_case ones, so
 * callers can no longer guess a name (docs/api-conventions.md, "Field names"). Every property of
 * every wire type in packages/protocol is snake_case, except the names the interface
 * specification fixes.
 */
const SPEC_FIXED_NAMES = new Set(['canSettle', 'assetIds', 'referenceAssets']);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const protocolDir = path.join(root, 'packages/protocol/src');

/** `file: property` for every property signature of an interface or object type. */
function wireProperties(): { file: string; name: string }[] {
  const found: { file: string; name: string }[] = [];
  for (const file of readdirSync(protocolDir).filter((name) => name.endsWith('.ts'))) {
    const source = ts.createSourceFile(
      file,
      readFileSync(path.join(protocolDir, file), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const visit = (node: ts.Node): void => {
      if (ts.isPropertySignature(node)) found.push({ file, name: node.name.getText(source) });
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('wire field casing', () => {
  it('every wire type property is snake_case, or a name the spec fixes', () => {
    const properties = wireProperties();
    expect(properties.length).toBeGreaterThan(50);
    const offenders = properties
      .filter(({ name }) => !/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(name))
      .filter(({ name }) => !SPEC_FIXED_NAMES.has(name))
      .map(({ file, name }) => `${file}: ${name}`);
    expect(offenders).toEqual([]);
  });

  it('the record keeps the spec name canSettle', () => {
    expect(wireProperties()).toContainEqual({ file: 'records.ts', name: 'canSettle' });
  });
});
