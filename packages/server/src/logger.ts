import pino from 'pino';

/**
 * Structured JSON logs. We never log request bodies, query strings or headers; redaction is the
 * second line of defence in case an object with credentials reaches a log call anyway.
 */
export function createLogger(level = 'info'): pino.Logger {
  return pino({
    level,
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        'headers.authorization',
        '*.headers.authorization',
        'key',
        '*.key',
        'api_key',
        '*.api_key',
        'body',
        '*.body',
      ],
      censor: '[redacted]',
    },
  });
}
