import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { registerCallerRoutes } from './caller-routes.js';
import type { AppDeps } from '../deps.js';
import { registerOperatorRoutes } from './operator-routes.js';
import { registerOperatorDashboardRoutes } from './operator-dashboard-routes.js';
import { registerCallerRequestRoutes } from './caller-request-routes.js';
import { registerCallerTaskRoutes } from './caller-task-routes.js';
import { registerCallerAssetRoutes } from './caller-asset-routes.js';
import { registerCallerModelRoutes } from './model-routes.js';
import { refuseUnknownBodyFields } from './console-bodies.js';
import { registerConsoleOpenApi } from './console-openapi.js';
import { BUILT_CONSOLE_DIR, registerConsoleStatic } from './console-static.js';
import { registerSessionRoutes } from './session-routes.js';
import { registerPaymentConsoleRoutes } from './payment-routes.js';
import { registerCallerWalletRoutes } from './caller-wallet-routes.js';

/**
 * The web console (docs/console.md): its API under `/console/api` in a scope of its own (the
 * session cookie and CSRF token; never an API key), and its built pages at `/console`.
 */
export async function registerConsole(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(cookie);
    // Before any route: every console write route refuses body fields it does not take.
    refuseUnknownBodyFields(scope, deps.config.server.console_require_operator_totp);
    registerSessionRoutes(scope, deps);
    registerCallerRoutes(scope, deps);
    registerOperatorRoutes(scope, deps);
    registerOperatorDashboardRoutes(scope, deps);
    registerCallerTaskRoutes(scope, deps);
    registerCallerRequestRoutes(scope, deps);
    registerCallerAssetRoutes(scope, deps);
    registerCallerModelRoutes(scope, deps);
    registerPaymentConsoleRoutes(scope, deps);
    registerCallerWalletRoutes(scope, deps);
    registerConsoleOpenApi(scope, app);
  });
  await app.register(async (scope) =>
    registerConsoleStatic(scope, deps.consoleDir ?? BUILT_CONSOLE_DIR),
  );
}
