import type { Budget, BudgetWindow } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { useI18n } from '../i18n.js';
import { Yuan, When, YuanField, submittedAmount } from '../money.js';
import { AMOUNT_RULES, yuanInputText } from '../money-text.js';
import { operatorApi } from './operator-api.js';

type OnFail = (error: unknown) => void;

const WINDOWS: readonly BudgetWindow[] = ['daily', 'weekly', 'monthly', 'total'];

/** A budget as one line: spent of limit per window, what remains, when it resets. */
export function BudgetLine({ budget }: { budget: Budget | null }) {
  const { t } = useI18n();
  if (budget === null) return <span>{t('op.noBudget')}</span>;
  return (
    <span data-budget-limit={budget.limit}>
      <Yuan micro={budget.spent} /> / <Yuan micro={budget.limit} /> ·{' '}
      {t(`op.window.${budget.window}`)} · {t('op.remaining')} <Yuan micro={budget.remaining} />
      {budget.resets_at !== null && (
        <>
          {' · '}
          {t('op.resetsAt')} <When iso={budget.resets_at} />
        </>
      )}
    </span>
  );
}

/**
 * Sets or removes the budget of an account or a key: the limit typed in yuan (starting from the
 * current one, exact) is sent as exact micro-yuan (AMOUNT_RULES.budget: 0 allowed, nothing may
 * be spent); the server checks it again.
 */
export function BudgetForm({
  owner,
  ownerId,
  budget,
  onSaved,
  onFail,
}: {
  owner: 'accounts' | 'keys';
  ownerId: string;
  budget: Budget | null;
  onSaved: () => void;
  onFail: OnFail;
}) {
  const { t } = useI18n();
  const [limit, setLimit] = useState(budget === null ? '' : yuanInputText(budget.limit));
  const [budgetWindow, setBudgetWindow] = useState<BudgetWindow>(budget?.window ?? 'monthly');
  const limitName = `budget-limit-${ownerId}`;
  const save = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const micro = submittedAmount(event, limitName, limit, AMOUNT_RULES.budget);
    if (micro === null) return;
    operatorApi
      .setBudget(owner, ownerId, { limit: micro, window: budgetWindow })
      .then(onSaved)
      .catch(onFail);
  };
  const remove = () => {
    operatorApi.setBudget(owner, ownerId, null).then(onSaved).catch(onFail);
  };
  return (
    <form className="inline with-amount" onSubmit={save} data-budget-form={owner}>
      <YuanField
        label={t('op.limitYuan')}
        name={limitName}
        rule={AMOUNT_RULES.budget}
        value={limit}
        onValue={setLimit}
      />
      <label>
        {t('op.window')}
        <select
          name={`budget-window-${ownerId}`}
          value={budgetWindow}
          onChange={(e) => setBudgetWindow(e.target.value as BudgetWindow)}
        >
          {WINDOWS.map((each) => (
            <option key={each} value={each}>
              {t(`op.window.${each}`)}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">{t('op.setBudget')}</button>
      {budget !== null && (
        <button type="button" className="secondary" onClick={remove}>
          {t('op.removeBudget')}
        </button>
      )}
    </form>
  );
}

/** A key's source-address allowlist, one address or CIDR block a line; empty or cleared: any. */
export function AllowedIpsForm({
  keyId,
  allowedIps,
  onSaved,
  onFail,
}: {
  keyId: string;
  allowedIps: string[] | null;
  onSaved: () => void;
  onFail: OnFail;
}) {
  const { t } = useI18n();
  const [text, setText] = useState((allowedIps ?? []).join('\n'));
  const save = (event: FormEvent) => {
    event.preventDefault();
    const lines = text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    operatorApi
      .setAllowedIps(keyId, lines.length === 0 ? null : lines)
      .then(onSaved)
      .catch(onFail);
  };
  const clear = () => {
    operatorApi.setAllowedIps(keyId, null).then(onSaved).catch(onFail);
  };
  return (
    <form onSubmit={save} data-allowed-ips-form={keyId}>
      <label>
        {t('op.allowedIps')}
        <textarea
          name={`allowed-ips-${keyId}`}
          rows={3}
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </label>
      <p>{t('op.allowedIpsHint')}</p>
      <button type="submit">{t('op.saveIps')}</button>
      {allowedIps !== null && (
        <button type="button" className="secondary" onClick={clear}>
          {t('op.clearIps')}
        </button>
      )}
    </form>
  );
}
