import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLimited } from '../../src/providers/upstream-http.js';

/** A body that yields `chunks` and can be told to fail or close early; no async iterator allowed. */
function body(chunks: readonly string[], ending: 'end' | 'close' | Error = 'end'): Readable {
  const stream = new Readable({
    read() {
      const next = pending.shift();
      if (next !== undefined) this.push(Buffer.from(next));
      else if (ending === 'end') this.push(null);
      else if (ending === 'close') this.destroy();
      else this.destroy(ending);
    },
  });
  const pending = [...chunks];
  // The read must not fall back to the iterator: a promise per chunk on every upstream answer.
  stream[Symbol.asyncIterator] = () => {
    throw new Error('read through an async iterator');
  };
  return stream;
}

describe('an upstream answer is read whole, within its bound, and never hangs', () => {
  it('reads every chunk of the answer, multi-byte characters across chunks included', async () => {
    const bytes = Buffer.from('{"content":"héllo"}');
    // The "é" is two bytes: the first chunk ends between them.
    const split = Readable.from([bytes.subarray(0, 14), bytes.subarray(14)], { objectMode: false });
    expect(await readLimited(split)).toBe('{"content":"héllo"}');
    expect(await readLimited(body(['{"a":', '1}']))).toBe('{"a":1}');
  });

  it('destroys an answer as soon as it passes the bound, and fails the read', async () => {
    const stream = body(['12345', '67890', 'more that must never be read']);
    await expect(readLimited(stream, 8)).rejects.toThrow('upstream body too large');
    expect(stream.destroyed).toBe(true);
  });

  it('accepts an answer of exactly the bound', async () => {
    expect(await readLimited(body(['1234', '5678']), 8)).toBe('12345678');
  });

  it('fails the read when the connection breaks mid-answer (error or early close), never hangs', async () => {
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    await expect(readLimited(body(['{"a"'], reset))).rejects.toBe(reset);
    await expect(readLimited(body(['{"a"'], 'close'))).rejects.toMatchObject({
      code: 'ERR_STREAM_PREMATURE_CLOSE',
    });
  });
});
