/**
 * Everything the simulator reads or generates is bounded, because it runs inside the gateway's
 * process by default: no request may make it allocate more than a few MiB beyond its own body,
 * or spin the CPU. Work proportional to the request body (parsing, hashing, counting tokens) is
 * linear and capped by `bodyBytes`; everything generated is capped here, whatever the request
 * asks. docs/simulator.md lists these limits.
 */
export const SIMULATOR_LIMITS = {
  /** Largest request body, deepest JSON nesting and most JSON items accepted (400 above any). */
  bodyBytes: 32 * 1024 * 1024,
  jsonDepth: 64,
  jsonItems: 200_000,
  /** Chat: output tokens of one answer, whatever `max_tokens` asks. */
  outputTokens: 32_768,
  /**
   * Chat: characters of one generated text (content, tool-call arguments, a schema sample), and
   * per output token allowed: a schema sample gets min(this, cap × `charactersPerToken`).
   */
  outputCharacters: 256 * 1024,
  charactersPerToken: 16,
  /** Chat: JSON values in one schema sample (also at most one per allowed output token), and its nesting. */
  sampleValues: 10_000,
  sampleDepth: 16,
  /** Chat: tools offered in one request (the gateway's own limit is 128). */
  tools: 128,
  /** Embeddings: inputs, dimensions, and inputs × dimensions (floats answered) per request. */
  embeddingInputs: 2_048,
  embeddingDimensions: 4_096,
  embeddingValues: 1_048_576,
  /** Rerank: documents per request. */
  rerankDocuments: 10_000,
  /**
   * Images, videos and H3: characters (code points, util/characters.ts: the gateway's unit) of
   * a prompt (OpenAI's own limit for image prompts).
   */
  promptCharacters: 32_000,
  /** Images: pictures per request, and the width and height range of each (pixels). */
  imagesPerRequest: 4,
  imageSide: { min: 64, max: 2_048 },
  /** Images answered as URLs: files kept for `GET /v1/images/files/…`, by count and bytes (oldest evicted). */
  imageFiles: 256,
  imageFileBytes: 64 * 1024 * 1024,
  /** Videos: seconds asked or delivered, and the width and height range (pixels, even). */
  videoSeconds: { min: 1, max: 20 },
  videoSide: { min: 64, max: 1_920 },
  /** Videos: frames per second of the generated file (low, so encoding stays cheap). */
  videoFramesPerSecond: 4,
  /** Videos: jobs kept (the oldest finished one is evicted; all unfinished -> 429). */
  videoJobs: 10_000,
  /**
   * Text calls remembered for the request look-up (`GET /v1/tollgate/requests/{id}`), by the
   * gateway's `X-Tollgate-Request-Id`; the oldest is forgotten first (then answered 404).
   */
  lookupRequests: 100_000,
  /**
   * Anthropic prompt caching: cached prefixes remembered (per organisation and prefix digest),
   * the least recently used forgotten first, each also forgotten when its TTL (5 min or 1 h) ends.
   */
  promptCacheEntries: 4_096,
  /**
   * Responses: reasoning items answered with `store` on, remembered (per organisation) so a later
   * input may name one by id without its `encrypted_content`; least recently used forgotten first.
   */
  storedReasoningItems: 10_000,
  /** Videos: longest `Idempotency-Key` accepted (Stripe's limit). */
  idempotencyKeyCharacters: 255,
  /** Videos: encoded files cached, by count and bytes (least recently read evicted). */
  videoFiles: 32,
  videoFileBytes: 64 * 1024 * 1024,
  /** Videos: encodings waiting for the one encoder (503 above), and the longest one may run. */
  videoEncodeQueue: 64,
  videoEncodeMs: 60_000,
} as const;
