/**
 * The shape of JSON text — nesting depth, number of items, duplicate keys — measured in one
 * linear pass without parsing, recursion or allocation per value, so a body nested 100,000 levels deep or
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
  | { readonly kind: 'items'; readonly field: string | undefined }
  /**
   * An object holding the same key twice (`{"a":1,"a":2}`, escapes decoded: `"\u0061"` is `a`).
   * JSON.parse keeps the last one and a proxy or log reader may keep the first, so two readers
   * of the same bytes would see two different requests: refused. `path` leads to the object.
   */
  | {
      readonly kind: 'duplicate';
      readonly path: readonly (string | number)[];
      readonly key: string;
    };

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
/** Objects with more keys than this check a new key against a set, not one by one. */
const SMALL_OBJECT_KEYS = 16;
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
  // The keys of the open objects, on one stack reused by every object (`keysFrom[level]` is
  // where a level's keys begin): a small object is checked by comparing with its few keys,
  // allocating nothing; one with more than SMALL_OBJECT_KEYS keys gets a set.
  const keyStack: string[] = [];
  const keysFrom = new Float64Array(size);
  const keySets: (Set<string> | undefined)[] = [];
  let depth = 0;
  let items = 0;
  const length = text.length;
  /** Keys and indexes of the open containers below `levels`. */
  const pathTo = (levels: number): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let level = 0; level < levels; level += 1)
      path.push(
        isObject[level] === 1
          ? keyOf(text, keyStart[level] ?? 0, keyEnd[level] ?? 0)
          : (index[level] ?? 0),
      );
    return path;
  };
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
        const key = exactKey(text, start, position + 1);
        const from = keysFrom[top] ?? 0;
        const set = keySets[top];
        if (set !== undefined) {
          if (set.has(key)) return { kind: 'duplicate', path: pathTo(top), key };
          set.add(key);
        } else {
          for (let slot = from; slot < keyStack.length; slot += 1)
            if (keyStack[slot] === key) return { kind: 'duplicate', path: pathTo(top), key };
          keyStack.push(key);
          if (keyStack.length - from > SMALL_OBJECT_KEYS)
            keySets[top] = new Set(keyStack.slice(from));
        }
      }
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (depth >= limits.maxDepth) return { kind: 'depth', path: pathTo(depth) };
      items += 1;
      if (items > limits.maxItems) return tooMany();
      const opened = code === OPEN_OBJECT ? 1 : 0;
      isObject[depth] = opened;
      expectingKey[depth] = opened;
      index[depth] = 0;
      keysFrom[depth] = keyStack.length;
      keySets[depth] = undefined;
      depth += 1;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      if (depth > 0) {
        depth -= 1;
        // The closed object's keys leave the stack (an array's level holds none).
        if (isObject[depth] === 1) keyStack.length = keysFrom[depth] ?? 0;
      }
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

/** A key exactly as the parser will read it: escapes decoded (only when there are any). */
function exactKey(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    // Invalid JSON: the parser that runs next refuses it; keep the raw text meanwhile.
    return raw;
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
