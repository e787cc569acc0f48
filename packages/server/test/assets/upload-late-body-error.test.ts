import { PassThrough } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/key-service.js';
import type { AppDeps } from '../../src/http/deps.js';
import { parseUpload } from '../../src/http/routes/assets.js';

/**
 * Node emits a cut-off body's `aborted` error on the request after the socket closed, possibly
 * after every reader of the body has let go of it; an `error` with no listener is an uncaught
 * exception and ends the gateway's process. An upload keeps one listener on its request for that.
 */
describe("an upload's request stream", () => {
  it('takes the late error of a cut-off body without throwing it at the process', () => {
    const raw = Object.assign(new PassThrough(), { complete: false });
    const request = {
      id: 'req_1',
      headers: {
        'idempotency-key': '7d3f0c8e-1b2a-4c5d-9e8f-0a1b2c3d4e5f',
        'content-type': 'image/png',
        'content-length': '10',
      },
      raw,
      body: raw,
    } as unknown as FastifyRequest;
    const input = parseUpload({} as AppDeps, request, {} as Principal);
    expect(input.body).toBe(raw);
    // What Node does a tick after the socket closed, when no reader listens any more.
    expect(() =>
      raw.emit('error', Object.assign(new Error('aborted'), { code: 'ECONNRESET' })),
    ).not.toThrow();
  });
});
