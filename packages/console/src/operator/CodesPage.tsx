import { useState, type FormEvent } from 'react';
import { saveFile } from '../components/DownloadLink.js';
import { Field, SubmitRow } from '../components/Field.js';
import { useI18n } from '../i18n.js';
import { YuanField, submittedAmount } from '../money.js';
import { AMOUNT_RULES } from '../money-text.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { CodeBatches } from './CodeBatches.js';
import { operatorApi } from './operator-api.js';

/**
 * Redemption code batches: amount (yuan, sent as exact micro-yuan), count, optional expiry; the
 * server's CSV is downloaded at once (the codes are stored hashed and never shown again). Below,
 * the batches made so far, each voidable (CodeBatches).
 */
export function CodesPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [amount, setAmount] = useState('');
  const [count, setCount] = useState('10');
  const [expires, setExpires] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // Bumped by each new batch: the batches below are read again.
  const [batches, setBatches] = useState(0);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setDone(false);
    setError(null);
    const micro = submittedAmount(event, 'codes-amount', amount, AMOUNT_RULES.movement);
    if (micro === null) return;
    operatorApi
      .redemptionBatchCsv({
        amount: micro,
        count: Number(count),
        // The end of the chosen day in the viewer's zone.
        ...(expires === '' ? {} : { expires_at: new Date(`${expires}T23:59:59`).toISOString() }),
      })
      .then((file) => {
        saveFile(file, 'redemption-codes.csv');
        setDone(true);
        setBatches((version) => version + 1);
      })
      .catch((failure: unknown) => {
        onError(failure);
        setError(failure);
      });
  };
  return (
    <section>
      <h1>{t('op.codes')}</h1>
      <ErrorLine error={error} />
      <form className="card narrow" onSubmit={submit}>
        <YuanField
          label={t('op.amountYuan')}
          name="codes-amount"
          rule={AMOUNT_RULES.movement}
          value={amount}
          onValue={setAmount}
        />
        <Field
          label={t('op.count')}
          name="codes-count"
          type="number"
          min={1}
          max={1000}
          required
          value={count}
          onValue={setCount}
        />
        <Field
          label={t('op.expires')}
          name="codes-expires"
          type="date"
          value={expires}
          onValue={setExpires}
        />
        <SubmitRow label={t('op.createCodes')} done={done && t('op.codesReady')} />
      </form>
      <CodeBatches onError={onError} version={batches} />
    </section>
  );
}
