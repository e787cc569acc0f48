import { Tollgate } from '@tollgate/sdk';
import { FileJournal } from '@tollgate/sdk/file-journal';

// The key stays in server-side configuration (spec 5.3): never in a URL or in browser code.
export const client = new Tollgate({
  baseURL: process.env['TOLLGATE_BASE_URL'] ?? 'http://127.0.0.1:8080/v1',
  apiKey: process.env['TOLLGATE_API_KEY'] ?? '',
  // Every business POST is written here, with its Idempotency-Key, before it is sent.
  journal: new FileJournal('./tollgate-journal.jsonl'),
  timeoutMs: 30_000,
});
