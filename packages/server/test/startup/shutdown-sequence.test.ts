import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { shutDownGracefully, type ShutdownSteps } from '../../src/startup/graceful-shutdown.js';

/**
 * The order SIGTERM's steps run in, with fake steps (the real process is tested in
 * reliability/graceful-shutdown.test.ts). The risks: the store closed while a request still
 * needs it; a shutdown that waits forever on a connection that never ends.
 */
describe('the graceful shutdown sequence', () => {
  function recorder(serverCloses: Promise<void>) {
    const events: string[] = [];
    const steps: ShutdownSteps = {
      drain: () => void events.push('drain'),
      stopBackground: async () => void events.push('background stopped'),
      closeServer: async () => {
        events.push('close server');
        await serverCloses;
        events.push('server closed');
      },
      cutConnections: async () => {
        events.push('cut');
        return 3;
      },
      closeServices: async () => void events.push('services closed'),
    };
    return { events, steps };
  }
  const logger = pino({ level: 'silent' });

  it('drains, waits the drain delay, closes the server, and closes services only after it closed', async () => {
    let finish = () => {};
    const { events, steps } = recorder(new Promise<void>((resolve) => (finish = resolve)));
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
      if (ms === 1_000) return; // the drain delay
      await new Promise(() => {}); // the grace never runs out here
    };
    const done = shutDownGracefully(steps, { drainDelayMs: 1_000, graceMs: 30_000 }, logger, sleep);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toEqual(['drain', 'background stopped', 'close server']);
    finish();
    expect(await done).toBe('clean');
    expect(events.slice(-2)).toEqual(['server closed', 'services closed']);
    expect(slept).toEqual([1_000, 30_000]);
  });

  it('cuts the connections left when the grace runs out, then closes services', async () => {
    let finish = () => {};
    const { events, steps } = recorder(new Promise<void>((resolve) => (finish = resolve)));
    const done = shutDownGracefully(steps, { drainDelayMs: 0, graceMs: 5 }, logger, async () => {
      // The grace runs out at once; cutting the connections is what lets the server close.
      setTimeout(finish, 0);
    });
    expect(await done).toBe('forced');
    expect(events).toEqual([
      'drain',
      'background stopped',
      'close server',
      'cut',
      'server closed',
      'services closed',
    ]);
  });
});
