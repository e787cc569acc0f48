import pino from 'pino';
import { pathForLog, REDACTED, redactSecrets } from './log-redaction.js';

/**
 * Structured JSON logs. We never log request bodies, query strings or headers. Three more
 * lines of defence, in case something with a credential reaches a log call anyway:
 * - `redact` blanks fields named like credentials;
 * - the `req` and `err` serializers keep a request to its method and redacted path, and drop
 *   the raw bytes Node attaches to HTTP parse errors (`rawPacket`: the request's headers);
 * - `streamWrite` runs `redactSecrets` over every finished line (our keys, also
 *   percent-encoded; `sk-…`; JWTs; `Bearer …`; `api_key=…`; the token of a credential route).
 * `destination` is for tests (a captured stream) and for `humanLogLines`; the default is
 * standard output.
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

/**
 * Whether `logger` writes lines of `level`: a caller whose line costs work to build (a redacted
 * path) skips it when the line would be dropped. A logger that cannot say is assumed to write.
 */
export function logsAt(logger: object, level: pino.Level): boolean {
  const { isLevelEnabled } = logger as Partial<Pick<pino.Logger, 'isLevelEnabled'>>;
  return typeof isLevelEnabled === 'function' ? isLevelEnabled.call(logger, level) : true;
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

/**
 * A destination that prints each finished JSON line for a person (LOG_FORMAT=human, the
 * default on a terminal): `14:03:07 WARN  sweep failed error="Error: disk full" stale=2`. Lines
 * reach it already redacted (`streamWrite` runs first). An error shows its type and message;
 * its stack is only in the JSON format. A line that is not JSON passes through unchanged.
 */
export function humanLogLines(output: { write(text: string): unknown }): pino.DestinationStream {
  return { write: (line: string) => void output.write(humanLine(line)) };
}

export function humanLine(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== 'object') return line;
  const {
    level,
    time,
    msg,
    err,
    pid: _pid,
    hostname: _hostname,
    ...fields
  } = entry as Record<string, unknown>;
  const parts = [
    typeof time === 'number' ? new Date(time).toTimeString().slice(0, 8) : '',
    (typeof level === 'number' ? (pino.levels.labels[level] ?? String(level)) : String(level))
      .toUpperCase()
      .padEnd(5),
    typeof msg === 'string' ? msg : '',
  ];
  if (err !== null && typeof err === 'object') {
    const { type, message } = err as { type?: unknown; message?: unknown };
    const name = typeof type === 'string' ? type : 'Error';
    parts.push(`error=${JSON.stringify(`${name}: ${typeof message === 'string' ? message : ''}`)}`);
  }
  for (const [name, value] of Object.entries(fields)) {
    const text =
      typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
    parts.push(`${name}=${text}`);
  }
  return `${parts.filter((part) => part !== '').join(' ')}\n`;
}
