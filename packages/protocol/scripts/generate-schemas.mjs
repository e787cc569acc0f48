// Regenerates packages/protocol/src/generated/wire-schemas.ts after a wire type changed:
//   node packages/protocol/scripts/generate-schemas.mjs
import { writeFileSync } from 'node:fs';
import * as prettier from 'prettier';
import { buildWireSchemas, generatedFile, moduleText } from './wire-schemas.mjs';

const options = (await prettier.resolveConfig(generatedFile)) ?? {};
const text = await prettier.format(moduleText(buildWireSchemas()), {
  ...options,
  filepath: generatedFile,
});
writeFileSync(generatedFile, text);
console.log(`wrote ${generatedFile}`);
