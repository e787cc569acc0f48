import { defineConfig } from 'vite';

/**
 * `@tollgate/protocol` from its source, as tsconfig.json's `paths` resolves it: the console needs
 * no build of packages/protocol first. What the console takes from it is types, erased here, and
 * the few constants it imports (the settle confirmation words, the error code table); nothing of
 * the server is ever bundled.
 */
const PROTOCOL_SOURCE = decodeURIComponent(
  new URL('../protocol/src/index.ts', import.meta.url).pathname,
);

/**
 * Built into dist/ for the gateway to serve at /console (docs/console.md): every script and
 * stylesheet is a hashed file under /console/assets/ (no inline script: the page's
 * Content-Security-Policy allows none), JSX through Vite's own transformer (no plugin).
 */
export default defineConfig({
  base: '/console/',
  resolve: { alias: [{ find: /^@tollgate\/protocol$/, replacement: PROTOCOL_SOURCE }] },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    // No inline module-preload helper: the CSP allows no inline script.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  oxc: { jsx: { runtime: 'automatic' } },
});
