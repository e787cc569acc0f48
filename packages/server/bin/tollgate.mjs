#!/usr/bin/env node
// The `tollgate` command. Runs the compiled CLI (npm start and npm test build it).
import { cliMain } from '../dist/cli/main.js';

await cliMain();
