import { MICRO_YUAN_PER_YUAN } from '@tollgate/protocol';
import { useI18n } from './i18n.js';

/**
 * Micro-yuan as yuan, exactly: integer digits only (no floating point), at least two decimals
 * and as many more as the amount has (1 234 567 → 1.234567, 2 000 000 → 2.00).
 */
export function yuanText(micro: number): string {
  const negative = micro < 0;
  const digits = String(Math.abs(micro)).padStart(7, '0');
  const whole = digits.slice(0, -6);
  const fraction = digits.slice(-6).replace(/0+$/, '').padEnd(2, '0');
  return `${negative ? '-' : ''}¥${Number(whole).toLocaleString('en-US')}.${fraction}`;
}

/**
 * Yuan typed by an operator as exact micro-yuan, by string arithmetic (no floating point):
 * `12.5` → 12 500 000. `null` for anything but an amount of at least `minimum` micro-yuan (a
 * top-up: positive; a budget's limit may be 0) with at most 6 decimals.
 */
export function parseYuan(text: string, minimum = 1): number | null {
  const match = /^(\d{1,7})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (match === null) return null;
  const micro = Number(match[1]) * MICRO_YUAN_PER_YUAN + Number((match[2] ?? '').padEnd(6, '0'));
  return micro >= minimum ? micro : null;
}

/** Micro-yuan in one fen: online payments are whole fen. */
export const MICRO_YUAN_PER_FEN = 10_000;

/**
 * Yuan typed by a member for an online top-up as exact micro-yuan, by string arithmetic: at most
 * two decimals (a fen), at least 0.01. `null` for anything else.
 */
export function parseYuanToFen(text: string): number | null {
  const match = /^(\d{1,8})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (match === null) return null;
  const micro =
    Number(match[1]) * MICRO_YUAN_PER_YUAN +
    Number((match[2] ?? '').padEnd(2, '0')) * MICRO_YUAN_PER_FEN;
  return micro > 0 ? micro : null;
}

/** An amount in yuan; the exact micro-yuan on hover (title). */
export function Yuan({ micro }: { micro: number }) {
  const { t } = useI18n();
  return (
    <span className="amount" title={`${micro.toLocaleString('en-US')} ${t('common.microYuan')}`}>
      {yuanText(micro)}
    </span>
  );
}

/** A time in the viewer's zone and language. */
export function When({ iso }: { iso: string | null }) {
  const { language, t } = useI18n();
  if (iso === null) return <span>{t('keys.never')}</span>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString(language)}</time>;
}
