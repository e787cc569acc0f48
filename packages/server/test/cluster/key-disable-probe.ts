import { CLUSTER_ADMIN_TOKEN, sleep, type Cluster } from './cluster.js';

/** How long each instance is asked before the probe gives up on it (the TTL is far longer). */
const PROBE_LIMIT_MS = 5_000;
const PROBE_EVERY_MS = 10;

export interface KeyDisableProbe {
  /** Each instance's answer to the key before the disable (all 200: the key is cached there). */
  readonly before: number[];
  /** Per instance: ms from the disable's answer to its first 401, or undefined (never within the limit). */
  readonly refusedAfterMs: (number | undefined)[];
}

/**
 * A new key is used on every instance directly (so each has it cached), then disabled through
 * instance 0; each instance is then asked with it every 10 ms until it answers 401. With the key
 * cache's TTL far above the bound, how soon each refuses is how soon the change notice arrived.
 * `GET /v1/models` authenticates like any business call and moves no money.
 */
export async function probeKeyDisable(cluster: Cluster): Promise<KeyDisableProbe> {
  const [first] = cluster.instanceBases;
  if (first === undefined) throw new Error('no instance');
  const account = await admin(`${first}/admin/v1/accounts`, { email: 'key-probe@example.test' });
  const key = await admin(`${first}/admin/v1/accounts/${String(account['id'])}/keys`, {
    kind: 'personal',
  });
  const ask = (base: string) =>
    fetch(`${base}/v1/models`, {
      headers: { authorization: `Bearer ${String(key['key'])}` },
      signal: AbortSignal.timeout(5_000),
    }).then(async (response) => (await response.arrayBuffer(), response.status));
  const before = await Promise.all(cluster.instanceBases.map(ask));
  await admin(`${first}/admin/v1/keys/${String(key['id'])}/disable`, {});
  const disabledAt = Date.now();
  const refusedAfterMs = await Promise.all(
    cluster.instanceBases.map(async (base) => {
      while (Date.now() - disabledAt < PROBE_LIMIT_MS) {
        if ((await ask(base)) === 401) return Date.now() - disabledAt;
        await sleep(PROBE_EVERY_MS);
      }
      return undefined;
    }),
  );
  return { before, refusedAfterMs };
}

async function admin(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLUSTER_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}
