import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * Risk: the SDK is meant for Node 20+ and browsers, and one `node:` import in its main entry
 * (a hash, a UUID, a file) breaks every browser bundle. The main entry is bundled for the
 * browser platform: any Node built-in makes the build fail. The file journal is Node only, on
 * its own subpath.
 */
describe('the SDK main entry in a browser bundle', () => {
  const entry = (file: string) => fileURLToPath(new URL(`../src/${file}`, import.meta.url));

  it('bundles for the browser with no Node built-in', async () => {
    const result = await build({
      entryPoints: [entry('index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const code = result.outputFiles[0]?.text ?? '';
    expect(code).not.toMatch(/from ["']node:/);
    expect(code).toContain('crypto.subtle');
  });

  it('the file journal subpath is the Node-only part (a browser build of it fails)', async () => {
    await expect(
      build({
        entryPoints: [entry('file-journal.ts')],
        bundle: true,
        platform: 'browser',
        format: 'esm',
        write: false,
        logLevel: 'silent',
      }),
    ).rejects.toThrow(/node:fs/);
  });
});
