/**
 * The shape of JSON text — nesting depth and number of items — measured in one linear pass
 * without parsing, recursion or allocation per value, so a body nested 100,000 levels deep or
 * holding a million tiny values is refused for the price of reading it, instead of overflowing
 * the stack or holding the event loop later (validators, `JSON.stringify`, `canonicalJson`).
 * Contract: for valid JSON, reports the first limit broken, or `undefined`. Invalid JSON is not
 * diagnosed here (the parser that runs next does that).
 */
export type JsonShapeProblem =
  /** Keys and array indexes from the top-level value to the first container too deep. */
  | { readonly kind: 'depth'; readonly path: readonly (string | number)[] }
  /**
   * More items (array elements plus object members) than allowed; `field` is the top-level
   * key being read when the count passed the limit (undefined when the body is not an object).
   */
  | { readonly kind: 'items'; readonly field: string | undefined };

export interface JsonShapeLimits {
  /** Deepest nesting of objects and arrays; the top-level value is level 1. */
  readonly maxDepth: number;
  /**
   * Most items, counted as containers opened plus commas outside strings: exactly the number
   * of array elements and object members when no container is empty (an empty one counts 1).
   */
  readonly maxItems: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
/** Object keys longer than this are shortened in the reported path (it ends up in messages). */
const MAX_KEY_CHARACTERS = 64;

export function checkJsonShape(
  text: string,
  limits: JsonShapeLimits,
): JsonShapeProblem | undefined {
  // One slot per open level, reused: is it an object, the current array index, whether the
  // next string is a key, and where the current key's raw text lies.
  const size = limits.maxDepth + 1;
  const isObject = new Uint8Array(size);
  const index = new Float64Array(size);
  const expectingKey = new Uint8Array(size);
  const keyStart = new Float64Array(size);
  const keyEnd = new Float64Array(size);
  let depth = 0;
  let items = 0;
  const length = text.length;
  const tooMany = (): JsonShapeProblem => ({
    kind: 'items',
    field:
      depth > 0 && isObject[0] === 1 ? keyOf(text, keyStart[0] ?? 0, keyEnd[0] ?? 0) : undefined,
  });
  for (let position = 0; position < length; position += 1) {
    const code = text.charCodeAt(position);
    if (code === QUOTE) {
      const start = position;
      position = stringEnd(text, position);
      const top = depth - 1;
      if (depth > 0 && isObject[top] === 1 && expectingKey[top] === 1) {
        expectingKey[top] = 0;
        keyStart[top] = start;
        keyEnd[top] = position + 1;
      }
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (depth >= limits.maxDepth) {
        const path: (string | number)[] = [];
        for (let level = 0; level < depth; level += 1)
          path.push(
            isObject[level] === 1
              ? keyOf(text, keyStart[level] ?? 0, keyEnd[level] ?? 0)
              : (index[level] ?? 0),
          );
        return { kind: 'depth', path };
      }
      items += 1;
      if (items > limits.maxItems) return tooMany();
      const opened = code === OPEN_OBJECT ? 1 : 0;
      isObject[depth] = opened;
      expectingKey[depth] = opened;
      index[depth] = 0;
      depth += 1;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      if (depth > 0) depth -= 1;
    } else if (code === COMMA) {
      items += 1;
      if (items > limits.maxItems) return tooMany();
      const top = depth - 1;
      if (depth === 0) continue;
      if (isObject[top] === 1) expectingKey[top] = 1;
      else index[top] = (index[top] ?? 0) + 1;
    }
  }
  return undefined;
}

/** Index of the quote closing the string that opens at `start` (or the text's end). */
function stringEnd(text: string, start: number): number {
  let position = start + 1;
  for (;;) {
    const quote = text.indexOf('"', position);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    position = quote + 1;
  }
}

function keyOf(text: string, start: number, end: number): string {
  const raw = text.slice(start, end);
  // A huge key is not decoded whole: its first characters, escapes left as written, suffice.
  if (raw.length > MAX_KEY_CHARACTERS * 8) return `${raw.slice(1, MAX_KEY_CHARACTERS + 1)}…`;
  let key: string;
  try {
    key = JSON.parse(raw) as string;
  } catch {
    key = raw.slice(1, -1);
  }
  return key.length > MAX_KEY_CHARACTERS ? `${key.slice(0, MAX_KEY_CHARACTERS)}…` : key;
}
