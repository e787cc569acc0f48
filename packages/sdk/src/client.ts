import type { H3Task, Task } from '@tollgate/protocol';
import { h3Family, imageOrVideoFamily } from './families.js';
import { generate, pendingJobs, type Delivery, type GenerateOptions } from './generate.js';
import { Transport, type Fetch } from './http.js';
import { MemoryJournal, type JobEntry, type RequestJournal } from './journal.js';
import { AccountResource } from './resources/account.js';
import { Assets } from './resources/assets.js';
import { Chat } from './resources/chat.js';
import { download, type Content, type ContentOptions } from './resources/content.js';
import { Embeddings } from './resources/embeddings.js';
import { H3, type H3Input } from './resources/h3.js';
import { Models } from './resources/models.js';
import { Requests } from './resources/requests.js';
import { Rerank } from './resources/rerank.js';
import {
  gatewayPath,
  TaskResource,
  Videos,
  type ImageInput,
  type VideoInput,
} from './resources/tasks.js';

export interface TollgateOptions {
  /** A personal or service key (`tgk_…`), kept in server-side configuration, never in a URL. */
  apiKey: string;
  /** The gateway's base URL, ending with `/v1` (e.g. `http://127.0.0.1:8080/v1`). */
  baseURL: string;
  /**
   * Where business POSTs are written before they are sent. In memory by default; a
   * `FileJournal` (`@tollgate/sdk/file-journal`, Node only) lets a script recover or resume
   * after a crash.
   */
  journal?: RequestJournal;
  /** Milliseconds to wait for an answer (headers, and a JSON body) before giving up: 60 000. */
  timeoutMs?: number;
  /** Milliseconds a stream may stay silent before it is given up: `timeoutMs`. */
  streamIdleTimeoutMs?: number;
  /** The `fetch` to send with (tests, proxies, instrumentation): the global one by default. */
  fetch?: Fetch;
  /** Makes the `Idempotency-Key` of each new business POST: `crypto.randomUUID` by default. */
  newIdempotencyKey?: () => string;
}

/**
 * The Tollgate client. It follows the caller rules of the spec: every business POST carries a
 * new `Idempotency-Key`, written to the journal before it is sent; nothing is ever retried;
 * an unknown outcome is an `OutcomeUnknownError` to be read back with `requests.recover`.
 */
export class Tollgate {
  readonly models: Models;
  readonly chat: Chat;
  readonly embeddings: Embeddings;
  readonly rerank: Rerank;
  readonly assets: Assets;
  readonly requests: Requests;
  readonly account: AccountResource;
  readonly images: TaskResource<ImageInput> & {
    /** Quote, create, wait, settle within `maxAmount`, deliver; resumable from the journal. */
    generate(input: ImageInput, options: GenerateOptions): Promise<Delivery<Task>>;
  };
  readonly videos: Videos & {
    /** Quote, create, wait, settle within `maxAmount`, deliver; resumable from the journal. */
    generate(input: VideoInput, options: GenerateOptions): Promise<Delivery<Task>>;
  };
  readonly h3: H3 & {
    /** Quote, submit, wait (`refresh=true`), settle within `maxAmount`, deliver; resumable. */
    generate(input: H3Input, options: GenerateOptions): Promise<Delivery<H3Task>>;
  };
  readonly journal: RequestJournal;
  private readonly transport: Transport;

  constructor(options: TollgateOptions) {
    if (!/^https?:\/\/[^/]+(\/.*)?\/v1\/?$/.test(options.baseURL))
      throw new TypeError(`baseURL must be an http(s) URL ending with /v1: ${options.baseURL}`);
    const timeoutMs = options.timeoutMs ?? 60_000;
    const newIdempotencyKey = options.newIdempotencyKey ?? (() => globalThis.crypto.randomUUID());
    this.journal = options.journal ?? new MemoryJournal();
    this.transport = new Transport({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      timeoutMs,
      journal: this.journal,
      newIdempotencyKey,
    });
    this.models = new Models(this.transport);
    this.chat = new Chat(this.transport, options.streamIdleTimeoutMs ?? timeoutMs);
    this.embeddings = new Embeddings(this.transport);
    this.rerank = new Rerank(this.transport);
    this.assets = new Assets(this.transport);
    this.requests = new Requests(this.transport);
    this.account = new AccountResource(this.transport);
    const deps = { journal: this.journal, requests: this.requests, newIdempotencyKey };

    const images = new TaskResource<ImageInput>(this.transport, 'images');
    const imageFamily = imageOrVideoFamily(images);
    this.images = Object.assign(images, {
      generate: (input: ImageInput, generateOptions: GenerateOptions) =>
        generate(deps, imageFamily, input, generateOptions),
    });
    const videos = new Videos(this.transport);
    const videoFamily = imageOrVideoFamily(videos);
    this.videos = Object.assign(videos, {
      generate: (input: VideoInput, generateOptions: GenerateOptions) =>
        generate(deps, videoFamily, input, generateOptions),
    });
    const h3 = new H3(this.transport);
    const family = h3Family(h3);
    this.h3 = Object.assign(h3, {
      generate: (input: H3Input, generateOptions: GenerateOptions) =>
        generate(deps, family, input, generateOptions),
    });
  }

  /**
   * Reads a gateway content path given by a body (`outputs[].content_url`, `content_path`,
   * `/v1/videos/{id}/content`) with this key, whole or a byte range.
   */
  download(contentPath: string, options: ContentOptions = {}): Promise<Content> {
    return download(this.transport, gatewayPath(contentPath), options);
  }

  /** The `generate` jobs of the journal that have not finished (crashed, stopped, running). */
  pendingJobs(): Promise<JobEntry[]> {
    return pendingJobs(this.journal);
  }
}
