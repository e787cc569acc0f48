/**
 * The time zone budget windows count in (`budget_time_zone`, docs/billing.md "Budgets"):
 * its default, and the check every place that takes a zone makes (the configuration, the
 * operator's change of it).
 */
export const DEFAULT_BUDGET_TIME_ZONE = 'Asia/Shanghai';

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
