import pino from 'pino';
import { pathForLog, REDACTED, redactSecrets } from './log-redaction.js';

/**
 * Structured JSON logs. We never log request bodies, query strings or headers. Three more
 * lines of defence, in case something with a credential reaches a log call anyway:
 * - `redact` blanks fields named like credentials;
 * - the `req` and `err` serializers keep a request to its method and redacted path, and drop
 *   the raw bytes Node attaches to HTTP parse errors (`rawPacket`: the request's headers);
 * - `streamWrite` runs `redactSecrets` over every finished line (our keys, also
 *   percent-encoded; `sk-…`; JWTs; `Bearer …`; `api_key=…`).
 * `destination` is for tests (a captured stream); the default is standard output.
 */
export function createLogger(level = 'info', destination?: pino.DestinationStream): pino.Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        'headers',
        '*.headers',
        'key',
        '*.key',
        'api_key',
        '*.api_key',
        'body',
        '*.body',
        'rawPacket',
        '*.rawPacket',
      ],
      censor: REDACTED,
    },
    serializers: { req: requestForLog, err: errorForLog },
    hooks: { streamWrite: redactSecrets },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/** Replaces Fastify's request serializer, which logs the full URL (query string included). */
function requestForLog(request: { method?: unknown; url?: unknown }): Record<string, unknown> {
  return {
    method: request.method,
    path: typeof request.url === 'string' ? pathForLog(request.url) : undefined,
  };
}

function errorForLog(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { rawPacket: _rawPacket, ...serialized } = pino.stdSerializers.err(error) as Record<
    string,
    unknown
  >;
  return serialized;
}
