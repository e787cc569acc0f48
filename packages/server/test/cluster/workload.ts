import { png } from '../helpers/media.js';
import { CLUSTER_ADMIN_TOKEN, sleep } from './cluster.js';
import type { Journal, OperationKind } from './journal.js';
import type { Random } from './random.js';

/** One account of the workload and its keys (disabled ones stay listed: they are tried too). */
interface WorkloadAccount {
  readonly id: string;
  readonly keys: { id: string; key: string; disabledAt: number | undefined }[];
}

interface Request {
  readonly kind: OperationKind;
  readonly account: WorkloadAccount;
  readonly key: { id: string; key: string } | undefined;
  readonly method: 'POST' | 'GET';
  readonly path: string;
  readonly body: string | Buffer;
  readonly headers: Record<string, string>;
  readonly idempotencyKey: string;
  readonly fault?: string | undefined;
  readonly amount?: number | undefined;
}

/** Upstream faults written into prompts, each a `tollgate sim` directive (docs/simulator.md). */
const CHAT_FAULTS = ['[sim:fail=500]', '[sim:hang]', '[sim:delay=300]', '[sim:no_usage]'];
const STREAM_FAULTS = ['[sim:cut_after=2]', '[sim:stall_after=2]', '[sim:error_after=2]'];
const VIDEO_FAULTS = ['[sim:task=unknown]', '[sim:task=fail]', '[sim:fail=503]'];
/** How often a request carries an upstream fault. */
const FAULT_SHARE = 0.15;
/** Answers after which the client sends the same request again with the same idempotency key. */
const RETRIED = new Set([0, 502, 503, 504]);
const MAX_ATTEMPTS = 4;

/**
 * The battery's client: a seeded mix of chat (plain and streamed), embeddings, video tasks
 * through settle, top-ups, key disables and asset uploads, all through nginx, each attempt
 * journalled with what was sent and what came back.
 */
export class Workload {
  readonly accounts: WorkloadAccount[] = [];
  /** Video tasks created (202), by the key that created them. */
  readonly tasks: { id: string; account: WorkloadAccount; key: { id: string; key: string } }[] = [];
  readonly settled = new Set<string>();
  upstreamFaults = 0;

  constructor(
    private readonly base: string,
    private readonly journal: Journal,
  ) {}

  /** `count` accounts with `balance` each and two keys. */
  async setUp(random: Random, count: number, balance: number): Promise<void> {
    for (let index = 0; index < count; index += 1) {
      const created = await this.admin('POST', '/admin/v1/accounts', {
        email: `battery-${index}@example.test`,
      });
      const account: WorkloadAccount = { id: String(created['id']), keys: [] };
      this.accounts.push(account);
      await this.topUp(random, account, balance);
      for (let key = 0; key < 2; key += 1) await this.newKey(account);
    }
  }

  /** One operation chosen by `random`. */
  async step(random: Random): Promise<void> {
    const account = random.pick(this.accounts);
    const roll = random.next();
    if (roll < 0.3) return this.chat(random, account, false);
    if (roll < 0.5) return this.chat(random, account, true);
    if (roll < 0.65) return this.embeddings(random, account);
    if (roll < 0.75) return this.video(random, account);
    if (roll < 0.85) return this.settleOne(random);
    if (roll < 0.91) return this.upload(random, account);
    if (roll < 0.97) return this.topUp(random, account, 10_000 + random.below(90_000));
    return this.disableOne(random, account);
  }

  /** Settles every task that awaits settlement (after the run, while nothing is faulted). */
  async settleAll(random: Random): Promise<void> {
    for (const task of this.tasks) if (!this.settled.has(task.id)) await this.settle(random, task);
  }

  private async chat(random: Random, account: WorkloadAccount, stream: boolean): Promise<void> {
    const fault = this.maybeFault(random, stream ? STREAM_FAULTS : CHAT_FAULTS);
    const body = {
      model: 'sim-chat',
      messages: [{ role: 'user', content: `hello ${random.below(1000)} ${fault ?? ''}` }],
      max_tokens: 64,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
    await this.business(
      random,
      account,
      stream ? 'chat_stream' : 'chat',
      '/v1/chat/completions',
      body,
      fault,
    );
  }

  private async embeddings(random: Random, account: WorkloadAccount): Promise<void> {
    const fault = this.maybeFault(random, CHAT_FAULTS);
    const body = { model: 'sim-embed', input: `text ${random.below(1000)} ${fault ?? ''}` };
    await this.business(random, account, 'embeddings', '/v1/embeddings', body, fault);
  }

  private async video(random: Random, account: WorkloadAccount): Promise<void> {
    const fault = this.maybeFault(random, VIDEO_FAULTS);
    const body = {
      model: 'sim-video',
      prompt: `clip ${random.below(1000)} [sim:task_seconds=1] ${fault ?? ''}`,
      seconds: 1,
      size: '320x240',
    };
    await this.business(random, account, 'video', '/v1/videos', body, fault);
  }

  private async settleOne(random: Random): Promise<void> {
    const open = this.tasks.filter((task) => !this.settled.has(task.id));
    if (open.length > 0) await this.settle(random, random.pick(open));
  }

  private async settle(random: Random, task: Workload['tasks'][number]): Promise<void> {
    const read = await this.send(task.key.key, 'GET', `/v1/videos/${task.id}`);
    if (read === undefined || read.status !== 200) return;
    const view = read.json as {
      billing?: { state?: string; actual_amount?: number; price_version?: string };
    };
    if (view.billing?.state !== 'pending') {
      if (view.billing?.state !== 'reserved') this.settled.add(task.id);
      return;
    }
    const body = {
      actual_amount: view.billing.actual_amount,
      price_version: view.billing.price_version,
      confirmation: 'settle_original_approved',
    };
    const request = this.request(
      random,
      'settle',
      task.account,
      task.key,
      `/v1/videos/${task.id}/settle`,
      body,
    );
    const succeeded = await this.attempt(
      { ...request, amount: view.billing.actual_amount },
      task.id,
    );
    if (succeeded) this.settled.add(task.id);
  }

  private async upload(random: Random, account: WorkloadAccount): Promise<void> {
    const key = this.activeKey(random, account);
    if (key === undefined) return;
    const side = 64 + 8 * random.below(8);
    await this.attempt({
      kind: 'upload',
      account,
      key,
      method: 'POST',
      path: '/v1/assets',
      body: png(side, side),
      headers: { 'content-type': 'image/png' },
      idempotencyKey: random.uuid(),
    });
  }

  /** A top-up with its own reference, sent again with the same reference until answered. */
  async topUp(random: Random, account: WorkloadAccount, amount: number): Promise<void> {
    const reference = `battery-${random.uuid()}`;
    await this.attempt({
      kind: 'topup',
      account,
      key: undefined,
      method: 'POST',
      path: `/admin/v1/accounts/${account.id}/topups`,
      body: JSON.stringify({ amount, reference }),
      headers: adminHeaders(),
      idempotencyKey: reference,
      amount,
    });
  }

  /** A new key for the account, then one of its older keys disabled (one stays active). */
  private async disableOne(random: Random, account: WorkloadAccount): Promise<void> {
    await this.newKey(account).catch(() => undefined);
    const active = account.keys.filter((key) => key.disabledAt === undefined);
    if (active.length < 2) return;
    const victim = active[0];
    if (victim === undefined) return;
    const answered = await this.attempt({
      kind: 'disable',
      account,
      key: victim,
      method: 'POST',
      path: `/admin/v1/keys/${victim.id}/disable`,
      body: '{}',
      headers: adminHeaders(),
      idempotencyKey: `disable-${victim.id}`,
    });
    if (answered) victim.disabledAt = Date.now();
  }

  private async newKey(account: WorkloadAccount): Promise<void> {
    const created = await this.admin('POST', `/admin/v1/accounts/${account.id}/keys`, {
      kind: 'personal',
    });
    account.keys.push({
      id: String(created['id']),
      key: String(created['key']),
      disabledAt: undefined,
    });
  }

  private async business(
    random: Random,
    account: WorkloadAccount,
    kind: OperationKind,
    path: string,
    body: unknown,
    fault: string | undefined,
  ): Promise<void> {
    // Now and then a key already disabled: every instance must refuse it once the bound passed.
    const disabled = account.keys.filter((key) => key.disabledAt !== undefined);
    const key =
      disabled.length > 0 && random.next() < 0.1
        ? random.pick(disabled)
        : this.activeKey(random, account);
    if (key === undefined) return;
    const request = { ...this.request(random, kind, account, key, path, body), fault };
    await this.attempt(request);
  }

  private request(
    random: Random,
    kind: OperationKind,
    account: WorkloadAccount,
    key: { id: string; key: string },
    path: string,
    body: unknown,
  ): Request {
    return {
      kind,
      account,
      key,
      method: 'POST',
      path,
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      idempotencyKey: random.uuid(),
    };
  }

  /**
   * Sends `request` until it is answered with something other than "no instance could take it"
   * (connection lost, 502–504 from nginx, 409 in progress), each time with the same idempotency
   * key; journals every attempt. Whether the last answer was a success.
   */
  private async attempt(request: Request, taskId?: string): Promise<boolean> {
    for (let attempt = 1; ; attempt += 1) {
      const sentAt = Date.now();
      const headers: Record<string, string> = { ...request.headers };
      if (request.key !== undefined && request.kind !== 'disable')
        headers['authorization'] = `Bearer ${request.key.key}`;
      if (request.kind !== 'topup' && request.kind !== 'disable')
        headers['idempotency-key'] = request.idempotencyKey;
      const answer = await this.exchange(request, headers);
      const json = answer.json as { id?: unknown; usage?: Record<string, number> } | undefined;
      this.journal.add({
        kind: request.kind,
        accountId: request.account.id,
        keyId: request.key?.id,
        idempotencyKey: request.idempotencyKey,
        fault: request.fault,
        amount: request.amount,
        sentAt,
        endedAt: Date.now(),
        status: answer.status,
        requestId: answer.requestId,
        succeeded: answer.succeeded,
        usage: answer.usage ?? json?.usage,
        taskId:
          taskId ??
          (request.kind === 'video' && answer.status === 202 ? String(json?.id) : undefined),
      });
      if (request.kind === 'video' && answer.status === 202 && request.key !== undefined)
        this.tasks.push({ id: String(json?.id), account: request.account, key: request.key });
      const again = RETRIED.has(answer.status) || answer.errorCode === 'IDEMPOTENCY_IN_PROGRESS';
      if (!again || attempt >= MAX_ATTEMPTS) return answer.succeeded;
      await sleep(300 * attempt);
    }
  }

  /** One HTTP exchange; a stream is read to its end and judged by its last events. */
  private async exchange(request: Request, headers: Record<string, string>) {
    try {
      const response = await fetch(`${this.base}${request.path}`, {
        method: request.method,
        headers,
        body: request.body,
        signal: AbortSignal.timeout(20_000),
      });
      const requestId = response.headers.get('x-service-request-id') ?? undefined;
      const text = await response.text();
      if (request.kind === 'chat_stream' && response.status === 200) {
        const events = text
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice('data: '.length));
        const payloads = events.filter((event) => event !== '[DONE]').map(parseJson);
        const usage = payloads
          .map((payload) => payload?.['usage'])
          .findLast((found) => found != null);
        const errored = payloads.some((payload) => payload?.['error'] !== undefined);
        return {
          status: 200,
          requestId,
          json: undefined,
          usage: usage as Record<string, number> | undefined,
          succeeded: events.at(-1) === '[DONE]' && !errored,
          errorCode: undefined,
        };
      }
      const json = parseJson(text);
      const error = json?.['error'] as { code?: string } | undefined;
      return {
        status: response.status,
        requestId,
        json,
        usage: undefined,
        succeeded: response.status >= 200 && response.status < 300,
        errorCode: error?.code,
      };
    } catch {
      return {
        status: 0,
        requestId: undefined,
        json: undefined,
        usage: undefined,
        succeeded: false,
        errorCode: undefined,
      };
    }
  }

  private async send(key: string, method: 'GET', path: string) {
    try {
      const response = await fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(10_000),
      });
      return { status: response.status, json: parseJson(await response.text()) };
    } catch {
      return undefined;
    }
  }

  private async admin(
    method: 'POST',
    path: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const response = await fetch(`${this.base}${path}`, {
          method,
          headers: adminHeaders(),
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        if (response.ok) return (await response.json()) as Record<string, unknown>;
        if (attempt >= MAX_ATTEMPTS)
          throw new Error(`${path}: ${response.status} ${await response.text()}`);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS) throw error;
      }
      await sleep(300 * attempt);
    }
  }

  private activeKey(random: Random, account: WorkloadAccount) {
    const active = account.keys.filter((key) => key.disabledAt === undefined);
    return active.length === 0 ? undefined : random.pick(active);
  }

  private maybeFault(random: Random, faults: readonly string[]): string | undefined {
    if (random.next() >= FAULT_SHARE) return undefined;
    this.upstreamFaults += 1;
    return random.pick(faults);
  }
}

function adminHeaders(): Record<string, string> {
  return { authorization: `Bearer ${CLUSTER_ADMIN_TOKEN}`, 'content-type': 'application/json' };
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
