import type { FastifyInstance } from 'fastify';
import { invalidInput } from '../../errors/api-error.js';
import { checkJsonShape, type JsonShapeProblem } from '../../util/json-shape.js';

/**
 * Deepest nesting accepted in any JSON body, `/v1` and `/admin/v1` alike (the top-level value is
 * level 1). Everything after the parser — validators, `JSON.stringify`, `canonicalJson` for
 * idempotency fingerprints — recurses per level, so this bound is what keeps them off the end
 * of the stack. Legitimate bodies are far shallower (chat's schema limit is 32 levels).
 */
export const MAX_JSON_DEPTH = 64;
/**
 * Most items (array elements plus object members) in any JSON body. The work done on a body
 * (parsing, validation, the fingerprint's canonical JSON, the upstream's copy) grows with its
 * item count more than with its bytes: 4 MiB of empty content parts is ~500,000 items, all
 * handled synchronously on the event loop. Real requests use far fewer (2,048 messages of a few
 * parts each is ~20,000).
 */
export const MAX_JSON_ITEMS = 100_000;
/** Path segments quoted in the "too deep" message; the rest is elided. */
const QUOTED_SEGMENTS = 8;

/**
 * The app's JSON body parser. `application/json` only (any other Content-Type is 415; routes
 * with other media types register their own parsers in their scope). A `POST` with
 * `Content-Type: application/json` and no body (settle) parses to `undefined`. A body nested
 * deeper than `MAX_JSON_DEPTH`, or holding more than `MAX_JSON_ITEMS` items, is 400 `INVALID_INPUT`
 * naming the top-level field being read when the limit was passed (or `body`). An object holding
 * the same key twice is 400 `INVALID_INPUT` naming that key (at the top level) or the top-level
 * field it lies in: the parser would keep the last one and another reader of the same bytes (a
 * proxy, a log) the first, so the request would mean two things. All decided by one linear scan
 * of the text before parsing, so nothing is built or recorded.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    const problem = checkJsonShape(text, { maxDepth: MAX_JSON_DEPTH, maxItems: MAX_JSON_ITEMS });
    if (problem !== undefined) {
      done(shapeError(problem), undefined);
      return;
    }
    void parseJson(request, text, done);
  });
}

function shapeError(problem: JsonShapeProblem) {
  if (problem.kind === 'duplicate') {
    const [first] = problem.path;
    const where = [...problem.path.slice(0, QUOTED_SEGMENTS), problem.key].join('.');
    return invalidInput(
      typeof first === 'string' ? first : problem.path.length === 0 ? problem.key : 'body',
      `the key ${JSON.stringify(problem.key)} appears twice in one object (at ${where}): send each field once`,
    );
  }
  if (problem.kind === 'items')
    return invalidInput(
      problem.field ?? 'body',
      `the body holds more than ${MAX_JSON_ITEMS} JSON items (array elements and object members)`,
    );
  const [first] = problem.path;
  const shown = problem.path.slice(0, QUOTED_SEGMENTS).join('.');
  const where = problem.path.length > QUOTED_SEGMENTS ? `${shown}.…` : shown;
  return invalidInput(
    typeof first === 'string' ? first : 'body',
    `nests deeper than ${MAX_JSON_DEPTH} levels${where === '' ? '' : ` (at ${where})`}`,
  );
}
