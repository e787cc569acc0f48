import type { ConsoleSessionState } from '@tollgate/protocol';
import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiFailure } from '../api.js';
import { EmailField } from '../components/Field.js';
import { NewPasswordFields } from '../components/NewPasswordFields.js';
import { useI18n } from '../i18n.js';
import { navigate } from '../router.js';
import { securityApi } from '../security-api.js';
import { useLoad } from '../useLoad.js';
import { Failure } from './ErrorLine.js';

/**
 * Self sign-up (docs/console.md, "Self sign-up"): a new account with the visitor as its member,
 * signed in at once. Reached from the sign-in page's link, shown only when the gateway allows it.
 */
export function SignUpPage({ onSignedIn }: { onSignedIn: (state: ConsoleSessionState) => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
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
    setBusy(true);
    setError(null);
    securityApi
      .signUp(email, password)
      .then(onSignedIn)
      .catch((failure: unknown) =>
        setError(
          failure instanceof ApiFailure && failure.status === 409 ? (
            t('signUp.taken')
          ) : failure instanceof ApiFailure && failure.status === 429 ? (
            t('signUp.throttled')
          ) : (
            <>
              {t('common.error')}
              <Failure error={failure} />
            </>
          ),
        ),
      )
      .finally(() => setBusy(false));
  };
  return (
    <section className="card narrow">
      <h1>{t('signUp.title')}</h1>
      <p className="muted">{t('signUp.note')}</p>
      <form onSubmit={submit}>
        <EmailField
          label={t('signIn.email')}
          name="signup-email"
          value={email}
          onValue={setEmail}
        />
        <NewPasswordFields
          names={['signup-password', 'signup-confirm']}
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
          {t('signUp.submit')}
        </button>
      </form>
      <p>
        <PageLink path="/" label={t('signUp.toSignIn')} />
      </p>
    </section>
  );
}

/** Under the sign-in form: the link to sign up, when the gateway allows sign-up. */
export function SignUpLink() {
  const { t } = useI18n();
  // Signed out: a failure has no session to end, and shows as no link.
  const config = useLoad(
    () => securityApi.config(),
    () => {},
  );
  if (config.value?.self_signup !== true) return null;
  return (
    <p className="narrow">
      <PageLink path="/sign-up" label={t('signUp.link')} />
    </p>
  );
}

function PageLink({ path, label }: { path: string; label: string }) {
  return (
    <a
      href={`/console${path === '/' ? '' : path}`}
      onClick={(event) => {
        event.preventDefault();
        navigate(path);
      }}
    >
      {label}
    </a>
  );
}
