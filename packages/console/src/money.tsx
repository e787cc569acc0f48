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
