import type { ConsoleSessionState } from '@tollgate/protocol';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api, ApiFailure } from '../api.js';
import { EmailField, Field } from '../components/Field.js';
import { useI18n } from '../i18n.js';
import { Failure } from './ErrorLine.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (state: ConsoleSessionState) => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // Shown once the gateway asks for it (a user with a second factor): 401 naming `totp`.
  const [totp, setTotp] = useState<string | null>(null);
  const [error, setError] = useState<ReactNode>(null);
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
          asksForCode ? (
            t('signIn.totpWrong')
          ) : failure instanceof ApiFailure && failure.status === 429 ? (
            t('signIn.throttled')
          ) : failure instanceof ApiFailure && failure.status === 401 ? (
            t('signIn.wrong')
          ) : (
            <>
              {t('common.error')}
              <Failure error={failure} />
            </>
          ),
        );
      })
      .finally(() => setBusy(false));
  };
  return (
    <section className="card narrow">
      <h1>{t('signIn.title')}</h1>
      <form onSubmit={submit}>
        <EmailField label={t('signIn.email')} name="email" value={email} onValue={setEmail} />
        <Field
          label={t('signIn.password')}
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        {totp !== null && (
          <Field
            label={t('signIn.totp')}
            name="totp"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            required
            autoFocus
            value={totp}
            onValue={(value) => setTotp(value.trim())}
          />
        )}
        {error !== null && (
          <div role="alert" className="error">
            {error}
          </div>
        )}
        <button type="submit" disabled={busy}>
          {t('signIn.submit')}
        </button>
      </form>
    </section>
  );
}
