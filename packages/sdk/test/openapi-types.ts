/**
 * Compile-time check (`tsc --noEmit -p tsconfig.json`; vitest does not type-check): the SDK's
 * result types agree with the types generated from the OpenAPI document
 * (src/generated/openapi.ts, kept in step with the served document by
 * packages/server/test/openapi/sdk-types-drift.test.ts). Every answer the document allows must
 * fit what the SDK promises its callers; the protocol types the SDK re-exports must be the
 * document's types exactly (assignable both ways).
 */
import type {
  CallerAccount,
  Asset,
  AssetList,
  ChatCompletion,
  ChatCompletionChunk,
  EmbeddingList,
  H3Quote,
  H3Task,
  ModelList,
  Quote,
  RequestRecord,
  RerankResult,
  Task,
} from '../src/index.js';
import type { components, paths } from '../src/generated/openapi.js';

type Schemas = components['schemas'];
/** Compiles only when `From` is assignable to `To`. */
type Fits<From extends To, To> = [From, To];
/** Compiles only when `A` and `B` are assignable to each other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<Condition extends true> = Condition;
type Json<
  Path extends keyof paths,
  Method extends 'get' | 'post',
  Status extends number,
> = paths[Path][Method] extends {
  responses: Record<Status, { content: { 'application/json': infer Body } }>;
}
  ? Body
  : never;

export type OpenApiAgreement = [
  Fits<Json<'/v1/chat/completions', 'post', 200>, ChatCompletion>,
  Fits<Schemas['ChatCompletionChunk'], ChatCompletionChunk>,
  Fits<Json<'/v1/embeddings', 'post', 200>, EmbeddingList>,
  Fits<Json<'/v1/rerank', 'post', 200>, RerankResult>,
  Holds<Same<Json<'/v1/models', 'get', 200>, ModelList>>,
  Holds<Same<Json<'/v1/account', 'get', 200>, CallerAccount>>,
  Holds<Same<Schemas['Asset'], Asset>>,
  Holds<Same<Json<'/v1/assets', 'get', 200>, AssetList>>,
  Holds<Same<Json<'/v1/images/quote', 'post', 200>, Quote>>,
  Holds<Same<Json<'/v1/images/{id}', 'get', 200>, Task>>,
  Holds<Same<Json<'/v1/h3/tasks/{id}', 'get', 200>, H3Task>>,
  Holds<Same<Schemas['H3Quote'], H3Quote>>,
  Holds<Same<Json<'/v1/requests/{id}', 'get', 200>, RequestRecord>>,
];
