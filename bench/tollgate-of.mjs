// The `tollgate` command of one build: `TOLLGATE_DIST=packages/server/dist-before node
// bench/tollgate-of.mjs ledger check`. bench/goals.sh --compare sets up and checks each build's
// store with that build's own CLI: a newer CLI would migrate the store past what the older build
// opens (it refuses a schema newer than its own).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = path.resolve(process.env.TOLLGATE_DIST ?? 'packages/server/dist');
const { cliMain } = await import(pathToFileURL(path.join(dist, 'cli/main.js')).href);
await cliMain();
