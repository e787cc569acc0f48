import {
  MAX_BALANCE_MICRO_YUAN,
  MAX_MOVEMENT_MICRO_YUAN,
  MICRO_YUAN_PER_YUAN,
} from '@tollgate/protocol';

/**
 * The console's one money formatter and one money parser (packages/console/README.md, "Money"),
 * pure functions with no React and no DOM (tested in test/money.test.ts). On the wire every amount
 * is an integer of micro-yuan (1 yuan = 1 000 000); a person reads and types yuan. Both
 * directions work on the decimal digits (strings and BigInt), never on floating point.
 */

/** Micro-yuan in one fen (0.01 yuan): the smallest figure shown, and online payments' step. */
export const MICRO_YUAN_PER_FEN = 10_000;

/** Digits of the fraction of a yuan that the wire carries (micro-yuan). */
const MICRO_DIGITS = 6;

/** `1234567` → `1,234,567`: an integer's digits grouped by three. */
function grouped(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * The exact figure, as the hover text and the input's echo show it: `1234567` → `1,234,567`
 * (the unit is added by the caller, in the viewer's language).
 */
export function microYuanFigure(micro: number): string {
  if (!Number.isSafeInteger(micro)) return String(micro);
  return `${micro < 0 ? '-' : ''}${grouped(String(Math.abs(micro)))}`;
}

/**
 * An amount as a person reads it: yuan with exactly two decimals, cut toward zero (never
 * rounded up: a figure never shows more money than there is), the whole yuan grouped by three.
 * `2_000_000` → `¥2.00`, `1_234_567` → `¥1.23`, `-15_000` → `-¥0.01`, `0` → `¥0.00`. An amount
 * that is not zero but less than one fen shows as `<¥0.01` (`-<¥0.01` below zero) instead of
 * as a zero that hides it. The exact figure goes on hover (`Yuan`, money.tsx).
 */
export function yuanText(micro: number): string {
  if (!Number.isSafeInteger(micro)) return `¥${String(micro)}`;
  const sign = micro < 0 ? '-' : '';
  const size = Math.abs(micro);
  if (size > 0 && size < MICRO_YUAN_PER_FEN) return `${sign}<¥0.01`;
  const digits = String(size).padStart(MICRO_DIGITS + 1, '0');
  const whole = digits.slice(0, -MICRO_DIGITS);
  const fen = digits.slice(-MICRO_DIGITS, -MICRO_DIGITS + 2);
  return `${sign}¥${grouped(whole)}.${fen}`;
}

/**
 * An amount as exact yuan for an input to start from (the parser's inverse): no grouping, no
 * sign of currency, no trailing zeros. `7_250_000` → `7.25`, `92` → `0.000092`, `5_000_000` → `5`.
 */
export function yuanInputText(micro: number): string {
  if (!Number.isSafeInteger(micro)) return String(micro);
  const sign = micro < 0 ? '-' : '';
  const digits = String(Math.abs(micro)).padStart(MICRO_DIGITS + 1, '0');
  const whole = digits.slice(0, -MICRO_DIGITS).replace(/^0+(?=\d)/, '');
  const fraction = digits.slice(-MICRO_DIGITS).replace(/0+$/, '');
  return `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** What an amount input accepts: micro-yuan from `min` to `max`, with at most `decimals`. */
export interface AmountRule {
  readonly min: number;
  readonly max: number;
  /** Decimal places of a yuan accepted: 6 (a micro-yuan) or 2 (a fen). */
  readonly decimals: number;
}

/**
 * The rules of the console's money inputs, each the server's own bound:
 * - `movement`: one top-up, one redemption code, one operator capture: at least one micro-yuan,
 *   at most MAX_MOVEMENT_MICRO_YUAN (10^13 micro-yuan, 10 million yuan);
 * - `onlineTopUp`: a member's online payment: whole fen (the provider charges fen), at least one;
 * - `budget`: a budget's limit: 0 (nothing may be spent) up to MAX_BALANCE_MICRO_YUAN (10^15).
 */
export const AMOUNT_RULES = {
  movement: { min: 1, max: MAX_MOVEMENT_MICRO_YUAN, decimals: MICRO_DIGITS },
  onlineTopUp: { min: MICRO_YUAN_PER_FEN, max: MAX_MOVEMENT_MICRO_YUAN, decimals: 2 },
  budget: { min: 0, max: MAX_BALANCE_MICRO_YUAN, decimals: MICRO_DIGITS },
} as const satisfies Record<string, AmountRule>;

/** Why a typed amount is refused (each has its message, `money.*`). */
export type AmountProblem = 'empty' | 'format' | 'negative' | 'decimals' | 'tooSmall' | 'tooLarge';

export type ParsedAmount =
  | { readonly ok: true; readonly micro: number }
  | { readonly ok: false; readonly problem: AmountProblem };

/** Full-width digits and point (a Chinese input method's `１２．５`) as ASCII. */
function halfWidth(text: string): string {
  return text.replace(/[\uFF10-\uFF19\uFF0E]/g, (char) =>
    String.fromCharCode(char.charCodeAt(0) - 0xfee0),
  );
}

/**
 * Yuan as typed into an amount input, as exact micro-yuan: `0.1` → 100 000, `12.5` →
 * 12 500 000, `.5` and `5.` accepted. The digits are read as integers (BigInt), never through
 * floating point. Surrounding spaces and a leading `¥`/`￥` are ignored; anything else that is
 * not digits with at most one decimal point is refused (`format`: no grouping commas, which
 * read as a decimal comma in some places), a minus sign as `negative`, more decimals than
 * `rule.decimals` as `decimals`, an amount outside `rule`'s bounds as `tooSmall`/`tooLarge`.
 */
export function parseYuan(text: string, rule: AmountRule): ParsedAmount {
  const typed = halfWidth(text.trim()).replace(/^[¥￥]\s*/, '');
  if (typed === '') return { ok: false, problem: 'empty' };
  if (/^[-−]/.test(typed) && /\d/.test(typed)) return { ok: false, problem: 'negative' };
  const match = /^(\d*)(?:\.(\d*))?$/.exec(typed);
  const whole = match?.[1] ?? '';
  const fraction = match?.[2] ?? '';
  if (match === null || whole + fraction === '') return { ok: false, problem: 'format' };
  if (fraction.length > rule.decimals) return { ok: false, problem: 'decimals' };
  const micro =
    BigInt(whole === '' ? '0' : whole) * BigInt(MICRO_YUAN_PER_YUAN) +
    BigInt(fraction.padEnd(MICRO_DIGITS, '0'));
  if (micro < BigInt(rule.min)) return { ok: false, problem: 'tooSmall' };
  // Never past a safe integer, whatever the rule says: the wire's micro-yuan are exact integers.
  if (micro > BigInt(rule.max) || micro > BigInt(Number.MAX_SAFE_INTEGER))
    return { ok: false, problem: 'tooLarge' };
  return { ok: true, micro: Number(micro) };
}
