/**
 * The source of the worker thread that encodes one MP4, run with `new Worker(source, { eval:
 * true })`. It is a string, not a module file, because the worker must load the same way from
 * the TypeScript sources (tests) and from `dist/` (a worker file would exist in only one of
 * them); it is plain CommonJS so no loader is involved.
 *
 * Input (`workerData`): `modulePath` (the resolved `h264-mp4-encoder`), `width`, `height`
 * (even), `seconds`, `framesPerSecond`, and three YUV colours `top`, `bottom`, `band`.
 * Frames: a vertical gradient from `top` to `bottom` with a band of `band` sweeping from left
 * to right over the video's length, so every frame differs and the picture moves.
 * Output: one message `{ bytes: Uint8Array }` (its buffer transferred) or `{ error: string }`.
 * The encoder's WebAssembly memory never shrinks, which is why each encoding gets its own
 * worker: the memory goes when the worker exits. Loading the emscripten module also installs
 * process-wide `uncaughtException`/`unhandledRejection` handlers — inside the worker they
 * cannot touch the gateway's own handlers.
 */
export const VIDEO_ENCODER_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { createH264MP4Encoder } = require(workerData.modulePath);

async function encode(spec) {
  const { width, height, seconds, framesPerSecond, top, bottom, band } = spec;
  const encoder = await createH264MP4Encoder();
  encoder.width = width;
  encoder.height = height;
  encoder.frameRate = framesPerSecond;
  encoder.speed = 10;
  encoder.quantizationParameter = 45; // coarse: small files, fast encoding
  encoder.groupOfPictures = framesPerSecond * 2;
  encoder.initialize();
  const lumaSize = width * height;
  const chromaWidth = width / 2;
  const chromaHeight = height / 2;
  const chromaSize = chromaWidth * chromaHeight;
  const frame = new Uint8Array(lumaSize + 2 * chromaSize);
  const mix = (a, b, y, rows) => Math.round(a + ((b - a) * y) / Math.max(1, rows - 1));
  // The gradient, drawn once: each frame starts as a copy of it.
  const background = new Uint8Array(frame.length);
  for (let y = 0; y < height; y += 1)
    background.fill(mix(top[0], bottom[0], y, height), y * width, (y + 1) * width);
  for (let y = 0; y < chromaHeight; y += 1) {
    background.fill(mix(top[1], bottom[1], y, chromaHeight), lumaSize + y * chromaWidth, lumaSize + (y + 1) * chromaWidth);
    const v = lumaSize + chromaSize + y * chromaWidth;
    background.fill(mix(top[2], bottom[2], y, chromaHeight), v, v + chromaWidth);
  }
  const frames = seconds * framesPerSecond;
  const bandWidth = Math.max(2, Math.floor(width / 8 / 2) * 2);
  for (let index = 0; index < frames; index += 1) {
    frame.set(background);
    const left = Math.floor(((width - bandWidth) * index) / Math.max(1, frames - 1) / 2) * 2;
    for (let y = 0; y < height; y += 1)
      frame.fill(band[0], y * width + left, y * width + left + bandWidth);
    for (let y = 0; y < chromaHeight; y += 1) {
      const u = lumaSize + y * chromaWidth + left / 2;
      frame.fill(band[1], u, u + bandWidth / 2);
      frame.fill(band[2], u + chromaSize, u + chromaSize + bandWidth / 2);
    }
    encoder.addFrameYuv(frame);
  }
  encoder.finalize();
  const bytes = encoder.FS.readFile(encoder.outputFilename);
  encoder.FS.unlink(encoder.outputFilename);
  encoder.delete();
  return bytes;
}

encode(workerData).then(
  (bytes) => {
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    parentPort.postMessage({ bytes: own }, [own.buffer]);
  },
  (error) => parentPort.postMessage({ error: String(error && error.stack || error) }),
);
`;
