import { defineConfig } from 'vite';

/**
 * Built into dist/ for the gateway to serve at /console (docs/console.md): every script and
 * stylesheet is a hashed file under /console/assets/ (no inline script: the page's
 * Content-Security-Policy allows none), JSX through Vite's own transformer (no plugin).
 */
export default defineConfig({
  base: '/console/',
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
