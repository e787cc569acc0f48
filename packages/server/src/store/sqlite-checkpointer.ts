import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the request path. SQLite's automatic checkpoint runs inside whichever
 * commit crosses the threshold and fsyncs there, on the event loop; on this project's VM disks
 * that cost more than the commits themselves. A worker thread with its own connection runs a
 * PASSIVE checkpoint (never blocks writers) every `intervalMs` instead. The main connection keeps
 * a high automatic threshold as a backstop should the worker stop. Small, frequent checkpoints
 * keep the tail short: on one core the worker's page copying pre-empts the event loop, so at
 * 500 req/s p99/p999 were 4.6/8.3 ms every 50 ms, 5.2/12 ms every 250 ms and 13/38 ms every
 * second, with the same throughput down to 50 ms (bench/RESULTS.md).
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.binding);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, binding: string, intervalMs = 50): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, binding, intervalMs },
  });
  worker.unref();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        // Keep the process alive until the worker has closed its connection.
        worker.ref();
        worker.postMessage('stop');
        setTimeout(() => void worker.terminate().then(() => resolve()), 2_000).unref();
      }),
  };
}
