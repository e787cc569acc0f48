// Preloaded into the gateway by `bench/profile.sh --heap` (node --import): V8's sampling heap profiler,
// through the inspector in the gateway's own process, counting objects that were collected too
// (Node's --heap-prof keeps only those alive at exit, which says nothing of allocation per
// request). The first SIGUSR2 starts sampling (after the warm-up), the second writes the profile
// to TOLLGATE_HEAP_PROFILE and stops. Summarised by bench/heap-summary.mjs.
// TOLLGATE_HEAP_SURVIVORS=1 leaves out what a scavenge collected: what is left is what lived long
// enough to be promoted to the old generation (and is still alive, or was collected by a
// mark-compact): the allocations that make the major collections.
import { writeFileSync } from 'node:fs';
import inspector from 'node:inspector';

const out = process.env.TOLLGATE_HEAP_PROFILE;
if (!out) throw new Error('bench/heap-sampler.mjs needs TOLLGATE_HEAP_PROFILE (the file to write)');
const session = new inspector.Session();
session.connect();
let sampling = false;
const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );
process.on('SIGUSR2', () => {
  const step = sampling
    ? post('HeapProfiler.stopSampling').then(({ profile }) =>
        writeFileSync(out, JSON.stringify(profile)),
      )
    : post('HeapProfiler.enable').then(() =>
        post('HeapProfiler.startSampling', {
          // One sample per 4 KiB allocated: tens of thousands over a few seconds at full load.
          samplingInterval: 4096,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: process.env.TOLLGATE_HEAP_SURVIVORS !== '1',
        }),
      );
  sampling = !sampling;
  step.catch((error) => console.error('heap sampler:', error));
});
