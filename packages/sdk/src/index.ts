export { Tollgate, type TollgateOptions } from './client.js';
export * from './errors.js';
export * from './task-errors.js';
export {
  MemoryJournal,
  type JobEntry,
  type JobStep,
  type JournalEntry,
  type RequestEntry,
  type RequestJournal,
  type RequestState,
} from './journal.js';
export type { Delivery, GenerateOptions } from './generate.js';
export type { DeliveredOutput } from './families.js';
export type { Stream } from './stream.js';
export type { BinaryBody, Fetch } from './http.js';
export type { Backoff } from './wait.js';
export type * from './types.js';
export type { ByteRange, Content, ContentOptions } from './resources/content.js';
export type { UploadOptions } from './resources/assets.js';
export type { RecoverOptions } from './resources/requests.js';
export type { H3Input } from './resources/h3.js';
export type { ImageInput, QuoteEcho, TaskPostOptions, VideoInput } from './resources/tasks.js';
export type {
  Account,
  CallerAccount,
  Asset,
  AssetList,
  ErrorCode,
  H3Quote,
  H3Task,
  Model,
  ModelList,
  Quote,
  RequestRecord,
  Task,
} from '@tollgate/protocol';
