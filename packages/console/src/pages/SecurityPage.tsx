import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiFailure } from '../api.js';
import { NewPasswordFields } from '../components/NewPasswordFields.js';
import { useI18n } from '../i18n.js';
import { When } from '../money.js';
import { securityApi } from '../security-api.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine, Failure } from './ErrorLine.js';
import { TotpSection } from './TotpSection.js';
import './security.css';

/**
 * The signed-in user's security page, for members and operators alike (docs/console.md,
 * "Security page"): open sessions (this one marked, the others can be ended), the password
 * change (which ends every other session: the server's rule), and the TOTP second factor.
 */
export function SecurityPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const sessions = useLoad(() => securityApi.sessions(), onError);
  const revoke = (id: string) => {
    if (!window.confirm(t('security.confirmRevoke'))) return;
    securityApi.revokeSession(id).then(sessions.reload).catch(sessions.fail);
  };
  return (
    <section>
      <h1>{t('security.title')}</h1>
      <h2>{t('security.sessions')}</h2>
      <ErrorLine error={sessions.error} />
      {sessions.value === null ? (
        sessions.error === null && <p>{t('common.loading')}</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('security.sessions')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('security.signedIn')}</th>
                <th scope="col">{t('security.lastSeen')}</th>
                <th scope="col">{t('security.address')}</th>
                <th scope="col">{t('security.browser')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('security.revoke')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.value.data.map((session) => (
                <tr
                  key={session.id}
                  data-session-id={session.id}
                  data-current={session.current ? 'true' : undefined}
                >
                  <td>
                    <When iso={session.created_at} />
                  </td>
                  <td>
                    <When iso={session.last_seen_at} />
                  </td>
                  <td>{session.address}</td>
                  <td className="user-agent">{session.user_agent}</td>
                  <td>
                    {session.current ? (
                      <span className="current-session">{t('security.current')}</span>
                    ) : (
                      <button type="button" className="danger" onClick={() => revoke(session.id)}>
                        {t('security.revoke')}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="security-grid">
        <PasswordChange onChanged={sessions.reload} onError={onError} />
        <TotpSection onError={onError} />
      </div>
    </section>
  );
}

function PasswordChange({
  onChanged,
  onError,
}: {
  onChanged: () => void;
  onError: (error: unknown) => void;
}) {
  const { t } = useI18n();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: ReactNode } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (next !== confirm) {
      setMessage({ ok: false, text: t('invite.mismatch') });
      return;
    }
    setBusy(true);
    setMessage(null);
    securityApi
      .changePassword(current, next)
      .then(() => {
        setMessage({ ok: true, text: t('security.passwordChanged') });
        setCurrent('');
        setNext('');
        setConfirm('');
        onChanged();
      })
      .catch((failure: unknown) => {
        onError(failure);
        const wrong = failure instanceof ApiFailure && failure.param === 'current_password';
        setMessage({
          ok: false,
          text: wrong ? (
            t('security.passwordWrong')
          ) : (
            <>
              {t('common.error')}
              <Failure error={failure} />
            </>
          ),
        });
      })
      .finally(() => setBusy(false));
  };
  return (
    <form className="card" onSubmit={submit}>
      <h2>{t('security.password')}</h2>
      <p className="muted">{t('security.passwordNote')}</p>
      <label>
        {t('security.currentPassword')}
        <input
          name="current-password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onChange={(event) => setCurrent(event.target.value)}
        />
      </label>
      <NewPasswordFields
        names={['new-password', 'confirm-password']}
        labels={[t('security.newPassword'), t('security.confirmPassword')]}
        password={next}
        confirm={confirm}
        onPassword={setNext}
        onConfirm={setConfirm}
      />
      {message !== null && (
        <div role={message.ok ? 'status' : 'alert'} className={message.ok ? 'success' : 'error'}>
          {message.text}
        </div>
      )}
      <button type="submit" disabled={busy}>
        {t('security.changePassword')}
      </button>
    </form>
  );
}
