import type { FastifyBaseLogger } from 'fastify';

/** What a graceful shutdown acts on, in the order it uses them (main.ts wires the real ones). */
export interface ShutdownSteps {
  /** `/readyz` 503 and `Connection: close` from now on (http/readiness.ts). */
  readonly drain: () => void;
  /** Stops the sweeper and the task worker; the worker's steps end and give back their leases. */
  readonly stopBackground: () => Promise<void>;
  /** Closes the listening socket and resolves when every request and stream in flight ended. */
  readonly closeServer: () => Promise<void>;
  /**
   * Cuts every connection still open and stops reading every stream still read upstream (the
   * grace ran out); answers how many connections it cut.
   */
  readonly cutConnections: () => Promise<number>;
  /** Closes the store, Redis, upstream pools and the rest, once nothing uses them. */
  readonly closeServices: () => Promise<void>;
}

export interface ShutdownTimes {
  /** How long `/readyz` says 503 before the port closes (`server.shutdown_drain_delay_ms`). */
  readonly drainDelayMs: number;
  /** How long what is in flight may take after that (`server.shutdown_grace_ms`). */
  readonly graceMs: number;
}

/**
 * SIGTERM's sequence (docs/operations.md, "Graceful shutdown"): turn `/readyz` to 503 and stop
 * the task worker claiming at once; after the drain delay close the port (new connections are
 * refused; a request on a kept-alive connection gets 503) and let requests and streams in flight
 * finish for the grace period (streams whose callers went away included: closing the server
 * waits for them, http/streams-in-flight.ts), then cut what is left (a stream cut off this way is
 * `submission_unknown`, its hold kept, as after a crash). Only then are the database and the
 * rest closed, so nothing in flight loses its store. Resolves `forced` when the grace ran out.
 */
export async function shutDownGracefully(
  steps: ShutdownSteps,
  times: ShutdownTimes,
  logger: FastifyBaseLogger,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<'clean' | 'forced'> {
  steps.drain();
  const background = steps.stopBackground();
  if (times.drainDelayMs > 0) await sleep(times.drainDelayMs);
  const closed = steps.closeServer().then(() => 'closed' as const);
  const outcome = await Promise.race([closed, sleep(times.graceMs).then(() => 'late' as const)]);
  if (outcome === 'late') {
    const cut = await steps.cutConnections();
    logger.warn(
      { connections: cut, graceMs: times.graceMs },
      'shutdown grace ran out; connections still open were cut',
    );
    await closed;
  }
  await background;
  await steps.closeServices();
  return outcome === 'late' ? 'forced' : 'clean';
}
