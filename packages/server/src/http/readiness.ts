/**
 * Whether this instance should still be sent new work. A graceful shutdown (main.ts) calls
 * `drain` first: `/readyz` answers 503 `draining` from then on, so a load balancer that polls it
 * stops routing here, and every response carries `Connection: close`, so kept-alive clients
 * (a proxy's upstream pool) open their next request elsewhere. Requests already here finish.
 */
export class Readiness {
  private drainingNow = false;

  drain(): void {
    this.drainingNow = true;
  }

  get draining(): boolean {
    return this.drainingNow;
  }
}
