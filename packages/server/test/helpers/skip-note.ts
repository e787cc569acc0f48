/**
 * What a suite registered skipped for a missing service carries in its meta: written by
 * helpers/required-services.ts in the test workers, read by reporters/skip-summary.ts in vitest's
 * main process (meta travels with the collected tasks). No imports, so the reporter can load it.
 */
export const SKIPPABLE_SERVICES = [
  'PostgreSQL',
  'Redis',
  'Chromium',
  'nginx',
  'redis-server',
] as const;

export interface SkipNote {
  readonly service: (typeof SKIPPABLE_SERVICES)[number];
  /** e.g. `TOLLGATE_TEST_PG_URL is not set`. */
  readonly reason: string;
}

/** The loud line saying a service's suites did not run (printed once per run by the reporter). */
export function skipBanner(service: SkipNote['service'], reason: string): string {
  return `*** ${service} suites SKIPPED: ${reason} (bash .ci/run provides it) ***`;
}

/** The key of the suite meta that holds a `SkipNote`. */
export const SKIP_NOTE_KEY = 'tollgateSkipped';

export function skipNoteOf(meta: object): SkipNote | undefined {
  const value = (meta as Record<string, unknown>)[SKIP_NOTE_KEY];
  if (typeof value !== 'object' || value === null) return undefined;
  const { service, reason } = value as Record<string, unknown>;
  return SKIPPABLE_SERVICES.some((known) => known === service) && typeof reason === 'string'
    ? { service: service as SkipNote['service'], reason }
    : undefined;
}
