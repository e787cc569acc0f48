// The image's HEALTHCHECK (Dockerfile, deploy/build-image.sh): exit 0 when this container's
// gateway says it is ready. `/readyz`, not `/healthz`: it answers 503 once a graceful shutdown
// starts draining, so an orchestrator stops sending work first (docs/operations.md).
import { get } from 'node:http';

const port = Number(process.env.PORT || 8080);
const request = get({ host: '127.0.0.1', port, path: '/readyz', timeout: 4000 }, (answer) => {
  answer.resume();
  process.exit(answer.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy());
request.on('error', () => process.exit(1));
