import { useState, type FormEvent } from 'react';
import { api, ApiFailure, type SessionState } from '../api.js';
import { useI18n } from '../i18n.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (state: SessionState) => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // Shown once the gateway asks for it (a user with a second factor): 401 naming `totp`.
  const [totp, setTotp] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    api
      .signIn(email, password, totp ?? undefined)
      .then(onSignedIn)
      .catch((failure: unknown) => {
        const asksForCode = failure instanceof ApiFailure && failure.param === 'totp';
        if (asksForCode && totp === null) {
          setTotp('');
          return;
        }
        setError(
          asksForCode
            ? t('signIn.totpWrong')
            : failure instanceof ApiFailure && failure.status === 429
              ? t('signIn.throttled')
              : failure instanceof ApiFailure && failure.status === 401
                ? t('signIn.wrong')
                : `${t('common.error')}${String(failure)}`,
        );
      })
      .finally(() => setBusy(false));
  };
  return (
    <section className="card narrow">
      <h1>{t('signIn.title')}</h1>
      <form onSubmit={submit}>
        <label>
          {t('signIn.email')}
          <input
            name="email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label>
          {t('signIn.password')}
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        {totp !== null && (
          <label>
            {t('signIn.totp')}
            <input
              name="totp"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              required
              autoFocus
              value={totp}
              onChange={(event) => setTotp(event.target.value.trim())}
            />
          </label>
        )}
        {error !== null && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {t('signIn.submit')}
        </button>
      </form>
    </section>
  );
}
