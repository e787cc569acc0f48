import { useEffect, useState, type FormEvent } from 'react';
import { NewPasswordFields } from '../components/NewPasswordFields.js';
import { api, type SessionState } from '../api.js';
import { useI18n } from '../i18n.js';

/** The one-time invitation link: shows whose it is, sets the password, then signs in. */
export function InvitePage({
  token,
  onSignedIn,
}: {
  token: string;
  onSignedIn: (state: SessionState) => void;
}) {
  const { t } = useI18n();
  const [email, setEmail] = useState<string | null>(null);
  const [unusable, setUnusable] = useState(false);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api
      .invitation(token)
      .then((invitation) => setEmail(invitation.email))
      .catch(() => setUnusable(true));
  }, [token]);
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
      .catch((failure: unknown) => setError(`${t('common.error')}${String(failure)}`))
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
            <p role="alert" className="error">
              {error}
            </p>
          )}
          <button type="submit" disabled={busy}>
            {t('invite.submit')}
          </button>
        </form>
      )}
    </section>
  );
}
