import { requiredExecutable } from '../helpers/required-services.js';
import { NGINX_EXECUTABLE } from './nginx.js';
import { REDIS_EXECUTABLE } from './redis-server.js';

/** The programs the battery runs as its children; without them it is skipped loudly (CI fails). */
export const nginxService = requiredExecutable('nginx', NGINX_EXECUTABLE);
export const redisServerService = requiredExecutable('redis-server', REDIS_EXECUTABLE);
