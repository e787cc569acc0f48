import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/http/metrics.js';

const example = (name: string) =>
  readFileSync(new URL(`../../../../examples/prometheus/${name}`, import.meta.url), 'utf8');
const deployDoc = () =>
  readFileSync(new URL('../../../../docs/deploy.md', import.meta.url), 'utf8');

/** The suffixes Prometheus adds to a histogram's or a summary's own name. */
const SERIES_SUFFIX = /_(bucket|count|sum)$/;

/**
 * The risk: an alert rule that reads a metric nobody exports (a typo, a metric renamed) never
 * fires, and nothing says so — the held money of `submission_unknown` records could grow, or the
 * ledger check fail, in silence. Every metric the shipped rules read must be one the gateway
 * registers (http/metrics.ts) or `ledger-check.sh` writes, and every alert docs/deploy.md
 * promises must be in the rules.
 */
describe('the example Prometheus alert rules', () => {
  const rules = example('tollgate-alerts.yml');

  it('read only metrics the gateway or ledger-check.sh exports', async () => {
    const gateway = (await new Metrics(false).registry.getMetricsAsJSON()).map(
      (metric) => metric.name,
    );
    const script = [...example('ledger-check.sh').matchAll(/^# TYPE (tollgate_\w+)/gm)].map(
      (match) => match[1],
    );
    const exported = new Set([...gateway, ...script]);
    const read = new Set(
      [...rules.matchAll(/\btollgate_\w+/g)].map((match) => match[0].replace(SERIES_SUFFIX, '')),
    );
    expect(read.size).toBeGreaterThan(5);
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('hold every alert docs/deploy.md lists', () => {
    const defined = new Set([...rules.matchAll(/- alert: (\w+)/g)].map((match) => match[1]));
    const monitoring = deployDoc().split('## Monitoring')[1]?.split('\n## ')[0] ?? '';
    const promised = [...monitoring.matchAll(/`(Tollgate\w+)`/g)].map((match) => match[1]);
    expect(promised.length).toBeGreaterThan(5);
    expect(promised.filter((name) => !defined.has(name))).toEqual([]);
  });
});
