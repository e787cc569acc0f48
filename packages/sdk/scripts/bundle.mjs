// Makes packages/sdk/dist installable on its own (run after `tsc -b`, which writes only the
// declarations): `npm run build` at the root or in packages/sdk, and `npm pack` (prepack).
//
// The published package has NO runtime dependencies, so it installs from its tarball alone,
// offline (packages/sdk/CHANGELOG.md 0.1.0):
// - dist/index.js and dist/file-journal.js are esbuild bundles of src/: `eventsource-parser`
//   (MIT, its licence copied to dist/THIRD-PARTY-NOTICES.txt) and the few values of
//   `@tollgate/protocol` the SDK uses (the error status table) are inlined;
// - the declarations tsc wrote import `@tollgate/protocol` (the wire types the answers are):
//   that package is private, so its declarations are copied to dist/protocol/ and the imports
//   rewritten to point there.
// Any bare import left in dist/ (other than `node:` built-ins) fails the build.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const dist = path.join(sdk, 'dist');
const protocolDist = fileURLToPath(new URL('../../protocol/dist', import.meta.url));

await build({
  entryPoints: [path.join(sdk, 'src/index.ts'), path.join(sdk, 'src/file-journal.ts')],
  outdir: dist,
  bundle: true,
  // The main entry runs in browsers too (test/browser-entry.test.ts); the file journal is Node only.
  platform: 'neutral',
  external: ['node:*'],
  mainFields: ['module', 'main'],
  format: 'esm',
  target: 'es2022',
  sourcemap: true,
  legalComments: 'inline',
  logLevel: 'warning',
});

const require = createRequire(import.meta.url);
const parserLicence = readFileSync(
  path.join(path.dirname(require.resolve('eventsource-parser/package.json')), 'LICENSE'),
  'utf8',
);
writeFileSync(
  path.join(dist, 'THIRD-PARTY-NOTICES.txt'),
  `dist/index.js includes eventsource-parser 3 (https://github.com/rexxars/eventsource-parser):\n\n${parserLicence}`,
);

// The protocol's declarations (its top-level modules: the generated JSON Schemas are not needed).
mkdirSync(path.join(dist, 'protocol'), { recursive: true });
for (const file of readdirSync(protocolDist))
  if (file.endsWith('.d.ts'))
    copyFileSync(path.join(protocolDist, file), path.join(dist, 'protocol', file));

const bareImport = /(from\s+|import\s*\(\s*)(['"])(@tollgate\/protocol)\2/g;
const specifiers = /(?:from\s+|import\s*\(\s*|import\s+)(['"])([^'"]+)\1/g;
const problems = [];
for (const file of filesUnder(dist)) {
  if (!file.endsWith('.d.ts') && !file.endsWith('.js')) continue;
  let text = readFileSync(file, 'utf8');
  if (file.endsWith('.d.ts') && !file.startsWith(path.join(dist, 'protocol') + path.sep)) {
    let relative = path.relative(path.dirname(file), path.join(dist, 'protocol/index.js'));
    if (!relative.startsWith('.')) relative = `./${relative}`;
    const rewritten = text.replace(
      bareImport,
      (_, before, quote) => `${before}${quote}${relative}${quote}`,
    );
    if (rewritten !== text) writeFileSync(file, (text = rewritten));
  }
  for (const [, , specifier] of text.matchAll(specifiers))
    if (!specifier.startsWith('.') && !specifier.startsWith('node:'))
      problems.push(`${path.relative(sdk, file)} imports ${specifier}`);
}
if (problems.length > 0) {
  console.error(`packages/sdk/dist must be self-contained:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}
