import type { ConsoleTotpSetup } from '@tollgate/protocol';
import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiFailure } from '../api.js';
import { useI18n } from '../i18n.js';
import { securityApi } from '../security-api.js';
import { useLoad } from '../useLoad.js';
import { Failure } from './ErrorLine.js';

type Message = { ok: boolean; text: ReactNode } | null;

/**
 * The TOTP second factor (docs/console.md, "Second factor"): set up (the secret and its
 * `otpauth://` URI shown once, as text to copy: no QR code, see docs/console.md), confirmed with
 * the app's first code; removed with a current code or the password.
 */
export function TotpSection({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const user = useLoad(() => securityApi.user(), onError);
  const [setup, setSetup] = useState<ConsoleTotpSetup | null>(null);
  const [message, setMessage] = useState<Message>(null);
  const failed = (failure: unknown, wrongText: string) => {
    onError(failure);
    const refused = failure instanceof ApiFailure && failure.status === 403;
    setMessage({
      ok: false,
      text:
        refused && failure.param === 'totp' ? (
          t('security.totpRequired')
        ) : refused && failure.param === 'password' ? (
          t('security.passwordWrong')
        ) : refused ? (
          wrongText
        ) : (
          <>
            {t('common.error')}
            <Failure error={failure} />
          </>
        ),
    });
  };
  const start = () => {
    setMessage(null);
    securityApi
      .totpSetup()
      .then(setSetup)
      .catch((failure: unknown) => failed(failure, ''));
  };
  const enabled = user.value?.totp_enabled ?? false;
  return (
    <div className="card" data-totp={enabled ? 'on' : 'off'}>
      <h2>{t('security.totp')}</h2>
      {user.value !== null && <p>{enabled ? t('security.totpOn') : t('security.totpOff')}</p>}
      {user.value !== null && !enabled && setup === null && (
        <button type="button" onClick={start}>
          {t('security.totpSetUp')}
        </button>
      )}
      {!enabled && setup !== null && (
        <TotpConfirm
          setup={setup}
          onEnabled={() => {
            setSetup(null);
            setMessage({ ok: true, text: t('security.totpEnabled') });
            user.reload();
          }}
          onFailed={(failure) => failed(failure, t('security.totpWrong'))}
        />
      )}
      {enabled && (
        <TotpRemove
          onRemoved={() => {
            setMessage({ ok: true, text: t('security.totpRemoved') });
            user.reload();
          }}
          onFailed={(failure) => failed(failure, t('security.totpWrong'))}
        />
      )}
      {message !== null && (
        <div role={message.ok ? 'status' : 'alert'} className={message.ok ? 'success' : 'error'}>
          {message.text}
        </div>
      )}
    </div>
  );
}

function TotpConfirm({
  setup,
  onEnabled,
  onFailed,
}: {
  setup: ConsoleTotpSetup;
  onEnabled: () => void;
  onFailed: (failure: unknown) => void;
}) {
  const { t } = useI18n();
  const [code, setCode] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    securityApi
      .totpEnable(code)
      .then(onEnabled)
      .catch((failure: unknown) => {
        setCode('');
        onFailed(failure);
      });
  };
  return (
    <form onSubmit={submit}>
      <p className="warning">{t('security.totpShownOnce')}</p>
      <Copyable label={t('security.totpSecret')} text={setup.secret} testId="totp-secret" />
      <Copyable label={t('security.totpUri')} text={setup.otpauth_url} testId="totp-uri" />
      <label>
        {t('security.totpCode')}
        <input
          name="totp-code"
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9]{6}"
          required
          value={code}
          onChange={(event) => setCode(event.target.value.trim())}
        />
      </label>
      <button type="submit">{t('security.totpEnable')}</button>
    </form>
  );
}

function TotpRemove({
  onRemoved,
  onFailed,
}: {
  onRemoved: () => void;
  onFailed: (failure: unknown) => void;
}) {
  const { t } = useI18n();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    securityApi
      .totpDisable(code, password)
      .then(() => {
        setCode('');
        setPassword('');
        onRemoved();
      })
      .catch(onFailed);
  };
  return (
    <form onSubmit={submit}>
      <h3>{t('security.totpRemove')}</h3>
      <p className="muted">{t('security.totpRemoveNote')}</p>
      <label>
        {t('security.totpRemoveCode')}
        <input
          name="remove-totp-code"
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9]{6}"
          value={code}
          onChange={(event) => setCode(event.target.value.trim())}
        />
      </label>
      <label>
        {t('security.totpRemovePassword')}
        <input
          name="remove-totp-password"
          type="password"
          autoComplete="current-password"
          required={code === ''}
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
      </label>
      <button type="submit" className="danger">
        {t('security.totpRemove')}
      </button>
    </form>
  );
}

/** A secret shown as text with a copy button. */
function Copyable({ label, text, testId }: { label: string; text: string; testId: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret">
      <p>{label}</p>
      <code data-testid={testId}>{text}</code>
      <button
        type="button"
        className="secondary"
        onClick={() => void navigator.clipboard.writeText(text).then(() => setCopied(true))}
      >
        {copied ? t('security.copied') : t('security.copy')}
      </button>
    </div>
  );
}
