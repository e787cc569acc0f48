import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import {
  canonicalEmail,
  mailboxOf,
  parseConsoleEmail,
  taggedAddressPattern,
} from '../../src/users/console-email.js';
import { up as canonicalEmails } from '../../src/store/migrations/034-console-email-canonical.js';
import { consoleUser, CONSOLE_PASSWORD } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const NEW_PASSWORD = 'a brand new password';
/** `alice@example.com` in fullwidth letters (U+FF41…), which NFKC folds to ASCII. */
const FULLWIDTH_ALICE = 'ａｌｉｃｅ@example.com';

describe('the console email rule (console-email.ts)', () => {
  it('folds case and Unicode compatibility forms to one canonical address, and is a fixed point', () => {
    for (const spelling of [
      'Alice@Example.com',
      FULLWIDTH_ALICE,
      'ＡＬＩＣＥ＠ＥＸＡＭＰＬＥ.ＣＯＭ',
    ])
      expect(parseConsoleEmail(spelling), spelling).toBe('alice@example.com');
    expect(canonicalEmail(canonicalEmail('ＡｌｉｃＥ@ﬁrm.example'))).toBe('alice@firm.example');
    expect(() => parseConsoleEmail('no-at-sign')).toThrow(/email/);
  });

  it('reads +tags as one mailbox only when asked to', () => {
    expect(mailboxOf('alice+news@example.com', false)).toBe('alice+news@example.com');
    expect(mailboxOf('alice+news@example.com', true)).toBe('alice@example.com');
    expect(mailboxOf('+only@example.com', true)).toBe('+only@example.com');
    expect(taggedAddressPattern('a_b%c@ex_ample.com')).toBe('a\\_b\\%c+%@ex\\_ample.com');
  });
});

describeEachDialect('console emails compare by one rule on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const withSignUp = (ignorePlusTags = false) =>
    startGateway(dialect, {
      config: testConfig({
        server: {
          ...defaultConfig.server,
          console_self_signup: true,
          console_email_ignore_plus_tags: ignorePlusTags,
        },
      }),
    });

  const signUp = (client: TestGateway, email: string, address = '127.0.0.1') =>
    client.app.inject({
      method: 'POST',
      url: '/console/api/signup',
      payload: { email, password: NEW_PASSWORD },
      remoteAddress: address,
    });

  const signIn = (client: TestGateway, email: string, password = CONSOLE_PASSWORD) =>
    client.app.inject({
      method: 'POST',
      url: '/console/api/session',
      payload: { email, password },
    });

  const userCount = async (client: TestGateway) =>
    (await client.services.store.db.selectFrom('console_users').select('id').execute()).length;

  /** An error answer without its request id: two refusals compared as the caller sees them. */
  const refusal = (body: string) => {
    const { error } = JSON.parse(body) as { error: Record<string, unknown> };
    return { ...error, request_id: undefined };
  };

  it('a sign-up with a case or fullwidth lookalike of an existing email is refused exactly as the duplicate is; nothing is created', async () => {
    const client = (gateway = await withSignUp());
    const holder = await client.account(0);
    await consoleUser(client, 'alice@example.com', 'member', holder.accountId);
    const users = await userCount(client);
    // Each attempt from its own address: the sign-up throttle is not what refuses them.
    const duplicate = await signUp(client, 'alice@example.com', '10.1.0.1');
    expect(duplicate.statusCode, duplicate.body).toBe(409);
    for (const [index, lookalike] of ['Alice@Example.com', FULLWIDTH_ALICE].entries()) {
      const refused = await signUp(client, lookalike, `10.1.0.${index + 2}`);
      expect(refused.statusCode, lookalike).toBe(409);
      expect(refused.headers['set-cookie']).toBeUndefined();
      expect(refusal(refused.body)).toEqual(refusal(duplicate.body));
    }
    expect(await userCount(client)).toBe(users);
  });

  it('sign-in works with any case or width of the address', async () => {
    const client = (gateway = await withSignUp());
    const created = await signUp(client, 'Bob@Example.com');
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ user: { email: 'bob@example.com' } });
    for (const spelling of ['bob@example.com', 'BOB@EXAMPLE.COM', 'ｂｏｂ@ｅｘａｍｐｌｅ.ｃｏｍ']) {
      const signedIn = await signIn(client, spelling, NEW_PASSWORD);
      expect(signedIn.statusCode, spelling).toBe(200);
    }
  });

  it('an invitation of a lookalike is the existing user (the CLI and the admin API too), never a second one', async () => {
    const client = (gateway = await withSignUp());
    const first = await client.services.consoleUsers.invite({
      email: 'Carol@Example.com',
      role: 'operator',
    });
    expect(first.user.email).toBe('carol@example.com');
    // Again while no password is set: a new link for the same user.
    const again = await client.admin('POST', '/admin/v1/invitations', {
      email: 'ｃａｒｏｌ@example.com',
      role: 'operator',
    });
    expect(again).toMatchObject({ user: { id: first.user.id, email: 'carol@example.com' } });
    expect(await userCount(client)).toBe(1);
  });

  it('+tags are distinct addresses by default, and one mailbox with server.console_email_ignore_plus_tags', async () => {
    const plain = (gateway = await withSignUp(false));
    expect((await signUp(plain, 'dave@example.com', '10.2.0.1')).statusCode).toBe(201);
    expect((await signUp(plain, 'dave+work@example.com', '10.2.0.2')).statusCode).toBe(201);
    await plain.close();

    const tagged = (gateway = await withSignUp(true));
    expect((await signUp(tagged, 'erin+shop@example.com', '10.3.0.1')).statusCode).toBe(201);
    const duplicate = await signUp(tagged, 'erin+shop@example.com', '10.3.0.2');
    expect(duplicate.statusCode).toBe(409);
    for (const [index, sameMailbox] of [
      'erin@example.com',
      'Erin+Other@Example.com',
      'ｅｒｉｎ+x@example.com',
    ].entries()) {
      const refused = await signUp(tagged, sameMailbox, `10.3.1.${index}`);
      expect(refused.statusCode, sameMailbox).toBe(409);
      expect(refusal(refused.body)).toEqual(refusal(duplicate.body));
    }
    // A LIKE wildcard in the address is a character, not a pattern.
    expect((await signUp(tagged, 'e_in@example.com', '10.3.2.1')).statusCode).toBe(201);
    const invited = await tagged.app.inject({
      method: 'POST',
      url: '/admin/v1/invitations',
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      payload: { email: 'erin@example.com', role: 'operator' },
    });
    expect(invited.statusCode).toBe(409);
    expect(invited.json()).toMatchObject({ error: { param: 'email' } });
  });

  it('migration 034 rewrites stored emails to their canonical form; a lookalike of a canonical row keeps its own', async () => {
    const client = (gateway = await withSignUp());
    const db = client.services.store.db;
    const row = (id: string, email: string, createdAt: number) => ({
      id,
      email,
      role: 'operator' as const,
      account_id: null,
      password_hash: null,
      created_at: createdAt,
      password_changed_at: null,
      disabled_at: null,
      totp_secret: null,
      totp_enabled_at: null,
      totp_last_step: null,
    });
    // As the gateway stored them before: lower-cased, not NFKC.
    await db
      .insertInto('console_users')
      .values([
        row('cu_old_fullwidth', 'ｆｒａｎｋ@example.com', 1),
        row('cu_old_lookalike', 'ｇｒａｃｅ@example.com', 2),
        row('cu_old_plain', 'grace@example.com', 3),
      ])
      .execute();
    await canonicalEmails(db as never);
    const emails = Object.fromEntries(
      (await db.selectFrom('console_users').select(['id', 'email']).execute()).map((found) => [
        found.id,
        found.email,
      ]),
    );
    expect(emails).toMatchObject({
      cu_old_fullwidth: 'frank@example.com',
      cu_old_lookalike: 'ｇｒａｃｅ@example.com',
      cu_old_plain: 'grace@example.com',
    });
    expect((await client.services.consoleUsers.byEmail('ｆｒａｎｋ@EXAMPLE.com'))?.id).toBe(
      'cu_old_fullwidth',
    );
  });
});
