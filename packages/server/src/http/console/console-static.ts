import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { CREDENTIAL_ROUTES } from '../../log-redaction.js';

/** Where `npm run build` puts the console (packages/console/dist), seen from this file in dist/. */
export const BUILT_CONSOLE_DIR = fileURLToPath(
  new URL('../../../../console/dist', import.meta.url),
);

/**
 * Nothing on a console page runs but the built scripts from this origin: no inline script or
 * style, no plugins, no framing, no base rewriting; data is fetched from this origin only.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

function pageHeaders(reply: FastifyReply): void {
  void reply.header('content-security-policy', CONSOLE_CSP);
  void reply.header('x-content-type-options', 'nosniff');
  // Invitation links carry their token in the path: never hand it to another site.
  void reply.header('referrer-policy', 'no-referrer');
  void reply.header('x-frame-options', 'DENY');
}

/**
 * Serves the built console at `/console` (docs/console.md): hashed files under
 * `/console/assets/` cached for a year, `index.html` never cached, and every other
 * `/console/...` path (not `/console/api`) answered with `index.html` so that the page's own
 * router shows it (a reload of `/console/keys` works). Without a build, `/console` says how to
 * make one.
 */
export async function registerConsoleStatic(app: FastifyInstance, dir: string): Promise<void> {
  const built = existsSync(path.join(dir, 'index.html'));
  const page = async (request: { url: string }, reply: FastifyReply) => {
    if (request.url.startsWith('/console/api')) throw new ApiError('NOT_FOUND', 'no such route');
    pageHeaders(reply);
    if (!built)
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build` (npm start does it).\n');
    void reply.header('cache-control', 'no-cache');
    return reply
      .type('text/html; charset=utf-8')
      .sendFile('index.html', dir, { cacheControl: false });
  };
  if (built)
    await app.register(fastifyStatic, {
      root: path.join(dir, 'assets'),
      prefix: '/console/assets/',
      decorateReply: true,
      index: false,
      list: false,
      dotfiles: 'deny',
      // The names carry their content's hash: a changed file is a new name.
      maxAge: '365d',
      immutable: true,
      setHeaders: (response) => {
        response.setHeader('content-security-policy', CONSOLE_CSP);
        response.setHeader('x-content-type-options', 'nosniff');
      },
    });
  app.get('/console', { schema: { hide: true } }, page);
  // The invitation link's page: the same page, on a route that declares its token a credential
  // (kept out of every log line, log-redaction.ts).
  app.get(CREDENTIAL_ROUTES.invitationPage, { schema: { hide: true } }, page);
  app.get('/console/*', { schema: { hide: true } }, page);
}
