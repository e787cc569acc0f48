import type { LedgerReport } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { useI18n, type MessageKey } from '../i18n.js';
import { messageText } from '../messages/index.js';
import { Yuan, When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { AccountPicker } from './AccountPicker.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/** An audit action's message (docs/audit.md); one the console does not know yet is "other". */
function auditActionKey(action: string): MessageKey {
  const key = `audit.action.${action}` as MessageKey;
  return messageText(key, 'en') === key ? 'audit.action.other' : key;
}

/** The audit log, newest first: who did what, when, to which account, how much, and why. */
export function AuditPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const page = useLoad(() => operatorApi.audit(null), onError);
  return (
    <section>
      <h1>{t('op.audit')}</h1>
      <ErrorLine error={page.error} />
      {page.value !== null && (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('op.more')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('op.when')}</th>
                <th scope="col">{t('op.who')}</th>
                <th scope="col">{t('op.what')}</th>
                <th scope="col">{t('op.target')}</th>
                <th scope="col">{t('op.amount')}</th>
                <th scope="col">{t('op.reason')}</th>
              </tr>
            </thead>
            <tbody>
              {page.value.data.map((event) => (
                <tr key={event.id} data-audit-action={event.action}>
                  <td>
                    <When iso={event.created_at} />
                  </td>
                  <td>
                    {event.actor.email ??
                      (event.actor.kind === 'cli'
                        ? `${t('op.cli')}${event.actor.id === null ? '' : ` (${event.actor.id})`}`
                        : t(
                            event.actor.kind === 'payment_provider'
                              ? 'op.paymentProvider'
                              : 'op.adminToken',
                          ))}
                  </td>
                  <td title={event.action}>{t(auditActionKey(event.action))}</td>
                  <td>
                    <code>{event.target_id ?? '—'}</code>
                  </td>
                  <td>{event.amount === null ? '—' : <Yuan micro={event.amount} />}</td>
                  <td>{event.reason ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Runs `tollgate ledger check` on demand and shows its result. */
export function LedgerPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const [report, setReport] = useState<LedgerReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = () => {
    setError(null);
    operatorApi
      .ledgerCheck()
      .then(setReport)
      .catch((failure: unknown) => {
        onError(failure);
        setError(failure);
      });
  };
  return (
    <section>
      <h1>{t('op.ledger')}</h1>
      <ErrorLine error={error} />
      <button type="button" onClick={run}>
        {t('op.runCheck')}
      </button>
      {report !== null &&
        (report.violations.length === 0 ? (
          <p role="status" className="success" data-ledger="clean">
            {t('op.clean')}
          </p>
        ) : (
          <div role="alert" className="error" data-ledger="violations">
            {t('op.violations')}
            {report.violations.length}
            <details className="disclosed">
              <summary>{t('op.violationsDetail')}</summary>
              <pre lang="en">{JSON.stringify(report.violations, null, 2)}</pre>
            </details>
          </div>
        ))}
    </section>
  );
}

/** Invites a member of an account or an operator: a one-time link, shown once. */
export function InvitePage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'operator'>('member');
  const [accountId, setAccountId] = useState('');
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    operatorApi
      .invite({
        email: email.trim(),
        role,
        ...(role === 'member' ? { account_id: accountId.trim() } : {}),
      })
      .then((invitation) => setLink(`${window.location.origin}${invitation.invite_url}`))
      .catch((failure: unknown) => {
        onError(failure);
        setError(failure);
      });
  };
  return (
    <section>
      <h1>{t('op.invite')}</h1>
      <ErrorLine error={error} />
      <form className="card narrow" onSubmit={submit}>
        <label>
          {t('op.email')}
          <input
            name="invite-email"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          {t('op.role')}
          <select
            name="invite-role"
            value={role}
            onChange={(e) => setRole(e.target.value === 'operator' ? 'operator' : 'member')}
          >
            <option value="member">{t('op.roleMember')}</option>
            <option value="operator">{t('op.roleOperator')}</option>
          </select>
        </label>
        {role === 'member' && (
          <AccountPicker
            name="invite-account"
            label={t('op.inviteAccount')}
            required
            value={accountId}
            onChange={setAccountId}
            onError={onError}
          />
        )}
        <button type="submit">{t('op.inviteButton')}</button>
      </form>
      {link !== null && (
        <p role="status" className="success">
          {t('op.inviteLink')}
          <code data-testid="invite-link">{link}</code>
        </p>
      )}
    </section>
  );
}
