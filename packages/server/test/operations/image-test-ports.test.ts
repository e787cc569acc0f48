import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../../../../deploy/test-image.sh');

/**
 * `deploy/test-image.sh` starts gateways on ports it chooses itself. A port in Linux's ephemeral
 * range can be the local end of another program's outgoing connection (CI's benchmark smoke runs
 * beside it and opens thousands): its "does anything listen there?" check passes, and the
 * gateway's listen then fails with EADDRINUSE, as it did in a CI run. Its ports must come from
 * below that range, like the test helpers' (helpers/processes.ts).
 */
it('the image test chooses its gateways’ ports below the ephemeral range', () => {
  const source = readFileSync(SCRIPT, 'utf8');
  const freePort = /^free_port\(\) \{\n[^]*?\n\}\n/m.exec(source)?.[0];
  expect(freePort).toBeDefined();
  const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  const work = mkdtempSync(path.join(tmpdir(), 'tollgate-image-ports-'));
  try {
    const ports = execFileSync(
      'bash',
      ['-c', `${freePort}\nfor i in $(seq 1 300); do free_port; done`],
      { env: { ...process.env, WORK: work }, encoding: 'utf8' },
    )
      .trim()
      .split('\n')
      .map(Number);
    expect(ports).toHaveLength(300);
    expect(new Set(ports).size).toBe(300);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(1024);
      expect(port).toBeLessThan(ephemeralStart ?? 32_768);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
