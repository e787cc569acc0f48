/**
 * The one unit of "characters" in every text limit, gateway and simulator alike: Unicode code
 * points — what JSON Schema's `maxLength` counts (the gateway's route schemas, ajv's default),
 * and what a person counts (an emoji is one character, though it is two UTF-16 units of
 * `String.length`). Counted without building an array, since texts can be long.
 */
export function characterCount(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
    }
    count += 1;
  }
  return count;
}
