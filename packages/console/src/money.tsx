import { useId, type FormEvent, type ReactNode } from 'react';
import { useI18n, type MessageKey } from './i18n.js';
import {
  MICRO_YUAN_PER_FEN,
  microYuanFigure,
  parseYuan,
  yuanText,
  type AmountProblem,
  type AmountRule,
} from './money-text.js';

/**
 * Money on the page (packages/console/README.md, "Money"): `Yuan` shows an amount, `YuanField`
 * takes one; both through the one formatter and parser of money-text.ts.
 */

/** `1234567` → `1,234,567 micro-yuan` (`微元`): the exact figure, in the viewer's language. */
export function useMicroYuanText(): (micro: number) => string {
  const { t } = useI18n();
  return (micro) => `${microYuanFigure(micro)} ${t('common.microYuan')}`;
}

/** An amount in yuan with two decimals (`yuanText`); the exact micro-yuan on hover (title). */
export function Yuan({ micro }: { micro: number }) {
  const exact = useMicroYuanText();
  return (
    <span className="amount" title={exact(micro)}>
      {yuanText(micro)}
    </span>
  );
}

const PROBLEM_MESSAGES: Record<AmountProblem, MessageKey> = {
  empty: 'money.empty',
  format: 'money.format',
  negative: 'money.negative',
  decimals: 'money.decimals',
  tooSmall: 'money.tooSmall',
  tooLarge: 'money.tooLarge',
};

/** Why `problem` refuses an amount under `rule`, in the viewer's language, with its bound. */
export function useAmountProblemText(): (problem: AmountProblem, rule: AmountRule) => string {
  const { t } = useI18n();
  return (problem, rule) => {
    const values: Record<string, string> = {
      decimals: String(rule.decimals),
      // The step in micro-yuan (`1`, `10,000`): never an amount written with six decimals.
      step: microYuanFigure(10 ** (6 - rule.decimals)),
      // Whole fen in yuan (`0.01 元`), less than a fen in micro-yuan (`1 微元`): two decimals at most.
      min:
        rule.min % MICRO_YUAN_PER_FEN === 0
          ? `${yuanText(rule.min).replace('¥', '')} ${t('money.yuan')}`
          : `${microYuanFigure(rule.min)} ${t('common.microYuan')}`,
      max: yuanText(rule.max).replace('¥', ''),
      micro: microYuanFigure(rule.max),
    };
    return t(PROBLEM_MESSAGES[problem]).replace(/\{(\w+)\}/g, (all, name: string) =>
      name in values ? (values[name] ?? all) : all,
    );
  };
}

/**
 * An amount input in yuan (`rule`: money-text.ts, AMOUNT_RULES): what it will send is echoed
 * under it as it is typed (`= 100,000 micro-yuan`), or, when `parseYuan` refuses it, why (a
 * polite live region, tied to the input by `aria-describedby`). The form reads the value with
 * `parseYuan` on submit and sends nothing when it is refused (`refuseAmount`).
 */
export function YuanField({
  label,
  name,
  value,
  onValue,
  rule,
}: {
  label: ReactNode;
  name: string;
  value: string;
  onValue: (value: string) => void;
  rule: AmountRule;
}) {
  const echoId = useId();
  const exact = useMicroYuanText();
  const problemText = useAmountProblemText();
  const parsed = value === '' ? null : parseYuan(value, rule);
  return (
    <div className="yuan-field">
      <label>
        {label}
        <input
          name={name}
          inputMode="decimal"
          autoComplete="off"
          required
          value={value}
          aria-invalid={parsed !== null && !parsed.ok}
          aria-describedby={echoId}
          onChange={(event) => onValue(event.target.value)}
        />
      </label>
      <p
        id={echoId}
        className={parsed?.ok === false ? 'micro-echo error' : 'micro-echo muted'}
        aria-live="polite"
        data-micro-echo={parsed?.ok === true ? parsed.micro : undefined}
      >
        {parsed === null
          ? null
          : parsed.ok
            ? `= ${exact(parsed.micro)}`
            : problemText(parsed.problem, rule)}
      </p>
    </div>
  );
}

/**
 * A submitted amount: its micro-yuan, or `null` after focusing the refused input of the form
 * (its echo already says why, YuanField).
 */
export function submittedAmount(
  event: FormEvent<HTMLFormElement>,
  name: string,
  value: string,
  rule: AmountRule,
): number | null {
  const parsed = parseYuan(value, rule);
  if (parsed.ok) return parsed.micro;
  const input = event.currentTarget.elements.namedItem(name);
  if (input instanceof HTMLInputElement) input.focus();
  return null;
}

/** A time in the viewer's zone and language. */
export function When({ iso }: { iso: string | null }) {
  const { language, t } = useI18n();
  if (iso === null) return <span>{t('keys.never')}</span>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString(language)}</time>;
}
