import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString } from 'pino';

/** What a request's logger is made from: Fastify's app logger (pino, with our redaction). */
type ParentLogger = FastifyBaseLogger & {
  isLevelEnabled(level: string): boolean;
  bindings(): Bindings;
};

/**
 * `request.log`, made when it first writes. Fastify gives every request a child logger bound to
 * its id; pino builds a child's bindings (serialised and redacted) when it is made, on every
 * request, while at `warn` and above most requests write no line at all (bench/RESULTS.md, "The
 * rest of the path, measured one step at a time"). This one holds the parent and the bindings and
 * makes the pino child on the first line it writes, or on anything else but a level check
 * (`child`, `bindings`, a level set), so every line it writes is the child's, byte for byte.
 * Route options for the child (a route's own `logLevel`) make it at once.
 */
export const requestLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> =
  function (parent, bindings, options) {
    // Fastify passes a route's own `logLevel` and `logSerializers` here, nothing else.
    if (options.level !== undefined || options.serializers !== undefined)
      return parent.child(bindings, options);
    return new RequestLogger(parent as ParentLogger, bindings);
  };

class RequestLogger implements FastifyBaseLogger {
  #child: ParentLogger | undefined;

  constructor(
    private readonly parent: ParentLogger,
    private readonly ownBindings: Bindings,
  ) {}

  /** The pino child, made once. */
  #made(): ParentLogger {
    this.#child ??= this.parent.child(this.ownBindings) as ParentLogger;
    return this.#child;
  }

  get level(): LevelWithSilentOrString {
    return (this.#child ?? this.parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#made().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }

  /** Writes through the child (made now) when `level` is written; drops the line otherwise. */
  #write(level: Level, line: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    const child = this.#made();
    child[level](...(line as Parameters<FastifyBaseLogger[Level]>));
  }

  fatal(...line: unknown[]): void {
    this.#write('fatal', line);
  }

  error(...line: unknown[]): void {
    this.#write('error', line);
  }

  warn(...line: unknown[]): void {
    this.#write('warn', line);
  }

  info(...line: unknown[]): void {
    this.#write('info', line);
  }

  debug(...line: unknown[]): void {
    this.#write('debug', line);
  }

  trace(...line: unknown[]): void {
    this.#write('trace', line);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options);
  }

  bindings(): Bindings {
    return this.#made().bindings();
  }
}
