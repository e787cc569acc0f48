import type { ConsoleSessionState } from '@tollgate/protocol';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api } from '../api.js';
import { NewPasswordFields } from '../components/NewPasswordFields.js';
import { useI18n } from '../i18n.js';
import { useLoad } from '../useLoad.js';
import { Failure } from './ErrorLine.js';

/** The invitation's failure is shown as "unusable" (no session to end: nothing else to do). */
const IGNORE = () => {};

/** The one-time invitation link: shows whose it is, sets the password, then signs in. */
export function InvitePage({
  token,
  onSignedIn,
}: {
  token: string;
  onSignedIn: (state: ConsoleSessionState) => void;
}) {
  const { t } = useI18n();
  const invitation = useLoad(() => api.invitation(token), IGNORE, [token]);
  const email = invitation.value?.email ?? null;
  const unusable = invitation.error !== null;
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<ReactNode>(null);
  const [busy, setBusy] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (password !== confirm) {
      setError(t('invite.mismatch'));
      return;
    }
    if (email === null) return;
    setBusy(true);
    setError(null);
    api
      .acceptInvitation(token, password)
      .then(() => api.signIn(email, password))
      .then(onSignedIn)
      .catch((failure: unknown) =>
        setError(
          <>
            {t('common.error')}
            <Failure error={failure} />
          </>,
        ),
      )
      .finally(() => setBusy(false));
  };
  if (unusable)
    return (
      <section className="card narrow">
        <h1>{t('invite.title')}</h1>
        <p role="alert" className="error">
          {t('invite.unusable')}
        </p>
      </section>
    );
  return (
    <section className="card narrow">
      <h1>{t('invite.title')}</h1>
      {email === null ? (
        <p>{t('common.loading')}</p>
      ) : (
        <form onSubmit={submit}>
          <p>
            {t('invite.for')} <strong className="invite-email">{email}</strong>
          </p>
          <input type="email" name="email" autoComplete="username" value={email} readOnly hidden />
          <NewPasswordFields
            names={['new-password', 'confirm-password']}
            labels={[t('invite.password'), t('invite.confirm')]}
            password={password}
            confirm={confirm}
            onPassword={setPassword}
            onConfirm={setConfirm}
          />
          {error !== null && (
            <div role="alert" className="error">
              {error}
            </div>
          )}
          <button type="submit" disabled={busy}>
            {t('invite.submit')}
          </button>
        </form>
      )}
    </section>
  );
}
