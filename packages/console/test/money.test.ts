import { MAX_BALANCE_MICRO_YUAN, MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import {
  AMOUNT_RULES,
  microYuanFigure,
  parseYuan,
  yuanInputText,
  yuanText,
} from '../src/money-text.js';

/**
 * The console's one money formatter and one parser (src/money-text.ts; README, "Money"): plain
 * functions, no DOM. Exact at their bounds: no floating point on the way in or out.
 */
const { movement, onlineTopUp, budget } = AMOUNT_RULES;

describe('yuanText: two decimals, cut toward zero; under one fen is <¥0.01', () => {
  it.each([
    [0, '¥0.00'],
    [1, '<¥0.01'],
    [92, '<¥0.01'],
    [9_999, '<¥0.01'],
    [10_000, '¥0.01'],
    [19_999, '¥0.01'],
    [100_000, '¥0.10'],
    [1_234_567, '¥1.23'],
    [1_999_999, '¥1.99'],
    [2_000_000, '¥2.00'],
    [13_500_000, '¥13.50'],
    [1_234_567_890_000, '¥1,234,567.89'],
    [MAX_MOVEMENT_MICRO_YUAN, '¥10,000,000.00'],
    [MAX_BALANCE_MICRO_YUAN, '¥1,000,000,000.00'],
    [Number.MAX_SAFE_INTEGER, '¥9,007,199,254.74'],
    [-92, '-<¥0.01'],
    [-15_000, '-¥0.01'],
    [-2_500_000, '-¥2.50'],
  ])('%d micro-yuan → %s', (micro, shown) => {
    expect(yuanText(micro)).toBe(shown);
  });

  it('never shows more than two decimals', () => {
    for (const micro of [1, 92, 10_001, 123_456_789, 999_999_999_999])
      expect(yuanText(micro)).toMatch(/^(<¥0\.01|¥[\d,]+\.\d{2})$/);
  });
});

describe('microYuanFigure: the exact figure of the hover text', () => {
  it.each([
    [0, '0'],
    [92, '92'],
    [100_000, '100,000'],
    [2_000_000, '2,000,000'],
    [MAX_MOVEMENT_MICRO_YUAN, '10,000,000,000,000'],
    [-1_234_567, '-1,234,567'],
  ])('%d → %s', (micro, figure) => {
    expect(microYuanFigure(micro)).toBe(figure);
    if (micro >= 0) expect(figure).toBe(micro.toLocaleString('en-US'));
  });
});

describe('parseYuan: yuan typed → exact micro-yuan', () => {
  it.each([
    ['0.1', 100_000],
    ['0.2', 200_000],
    ['0.3', 300_000],
    ['1.1', 1_100_000],
    ['12.5', 12_500_000],
    ['7.25', 7_250_000],
    ['0.000001', 1],
    ['0.000092', 92],
    ['1.000001', 1_000_001],
    ['4.35', 4_350_000],
    ['9999999.999999', 9_999_999_999_999],
    ['10000000', MAX_MOVEMENT_MICRO_YUAN],
    ['10000000.000000', MAX_MOVEMENT_MICRO_YUAN],
    ['.5', 500_000],
    ['5.', 5_000_000],
    ['007', 7_000_000],
    [' 3 ', 3_000_000],
    ['¥2', 2_000_000],
    ['￥2.5', 2_500_000],
    ['１２．５', 12_500_000],
  ])('%j → %d', (typed, micro) => {
    expect(parseYuan(typed, movement)).toEqual({ ok: true, micro });
  });

  it('is exact where floating point multiplication is not (1.005, 8.2, 4.1)', () => {
    for (const [typed, micro] of [
      ['1.005', 1_005_000],
      ['8.2', 8_200_000],
      ['4.1', 4_100_000],
    ] as const) {
      // 1004999.9999999999, 8199999.999999999, 4099999.9999999995 as floats.
      expect(Number(typed) * 1_000_000).not.toBe(micro);
      expect(parseYuan(typed, movement)).toEqual({ ok: true, micro });
    }
  });

  it('refuses more than six decimals, and more than two where whole fen are asked for', () => {
    expect(parseYuan('0.0000001', movement)).toEqual({ ok: false, problem: 'decimals' });
    expect(parseYuan('1.1234567', budget)).toEqual({ ok: false, problem: 'decimals' });
    // Trailing zeros are still digits typed: refused, not silently dropped.
    expect(parseYuan('1.0000000', movement)).toEqual({ ok: false, problem: 'decimals' });
    expect(parseYuan('1.001', onlineTopUp)).toEqual({ ok: false, problem: 'decimals' });
    expect(parseYuan('1.01', onlineTopUp)).toEqual({ ok: true, micro: 1_010_000 });
  });

  it('holds each rule to the server bound: a movement from 1 micro-yuan to 10^13', () => {
    expect(parseYuan('0', movement)).toEqual({ ok: false, problem: 'tooSmall' });
    expect(parseYuan('0.000000', movement)).toEqual({ ok: false, problem: 'tooSmall' });
    expect(parseYuan('0.000001', movement)).toEqual({ ok: true, micro: 1 });
    expect(parseYuan('10000000', movement)).toEqual({ ok: true, micro: 10 ** 13 });
    expect(parseYuan('10000000.000001', movement)).toEqual({ ok: false, problem: 'tooLarge' });
    expect(parseYuan('99999999999999999999999', movement)).toEqual({
      ok: false,
      problem: 'tooLarge',
    });
  });

  it('a budget from 0 to 10^15; an online top-up from one fen to 10^13 in whole fen', () => {
    expect(parseYuan('0', budget)).toEqual({ ok: true, micro: 0 });
    expect(parseYuan('1000000000', budget)).toEqual({ ok: true, micro: MAX_BALANCE_MICRO_YUAN });
    expect(parseYuan('1000000000.000001', budget)).toEqual({ ok: false, problem: 'tooLarge' });
    expect(parseYuan('0.01', onlineTopUp)).toEqual({ ok: true, micro: 10_000 });
    expect(parseYuan('0', onlineTopUp)).toEqual({ ok: false, problem: 'tooSmall' });
    expect(parseYuan('10000000.00', onlineTopUp)).toEqual({ ok: true, micro: 10 ** 13 });
    expect(parseYuan('10000000.01', onlineTopUp)).toEqual({ ok: false, problem: 'tooLarge' });
  });

  it.each(['', '   ', '¥'])('%j is empty', (typed) => {
    expect(parseYuan(typed, movement)).toEqual({ ok: false, problem: 'empty' });
  });

  it.each(['-1', '-0.5', '−3'])('%j is negative', (typed) => {
    expect(parseYuan(typed, budget)).toEqual({ ok: false, problem: 'negative' });
  });

  it.each(['.', 'abc', '1,000', '1.2.3', '1e3', '0x10', '+5', '1 000', 'NaN', 'Infinity', '5元'])(
    '%j is not an amount',
    (typed) => {
      expect(parseYuan(typed, movement)).toEqual({ ok: false, problem: 'format' });
    },
  );

  it('reads back what yuanInputText writes, for every bound', () => {
    for (const micro of [0, 1, 92, 10_000, 100_000, 7_250_000, 1_000_001, 10 ** 13, 10 ** 15]) {
      const text = yuanInputText(micro);
      expect(parseYuan(text, budget)).toEqual({ ok: true, micro });
    }
  });
});

describe('yuanInputText: exact yuan for an input to start from', () => {
  it.each([
    [0, '0'],
    [1, '0.000001'],
    [92, '0.000092'],
    [100_000, '0.1'],
    [5_000_000, '5'],
    [7_250_000, '7.25'],
    [1_000_001, '1.000001'],
    [MAX_BALANCE_MICRO_YUAN, '1000000000'],
  ])('%d → %s', (micro, text) => {
    expect(yuanInputText(micro)).toBe(text);
  });
});

describe('yuan ⇄ micro-yuan at the bounds: 0, one micro-yuan, the largest safe integer', () => {
  /** A rule as wide as a safe integer: the conversions' own bounds, not a route's. */
  const widest = { min: 0, max: Number.MAX_SAFE_INTEGER, decimals: 6 } as const;
  const largest = '9007199254.740991';

  it('0 and 0.000001 yuan are 0 and 1 micro-yuan, and back', () => {
    expect(parseYuan('0', widest)).toEqual({ ok: true, micro: 0 });
    expect(parseYuan('0.000000', widest)).toEqual({ ok: true, micro: 0 });
    expect(parseYuan('0.000001', widest)).toEqual({ ok: true, micro: 1 });
    expect(yuanInputText(0)).toBe('0');
    expect(yuanInputText(1)).toBe('0.000001');
    expect(yuanText(0)).toBe('¥0.00');
    expect(yuanText(1)).toBe('<¥0.01');
  });

  it('the largest safe integer of micro-yuan, exactly, and not one more', () => {
    expect(parseYuan(largest, widest)).toEqual({ ok: true, micro: Number.MAX_SAFE_INTEGER });
    expect(yuanInputText(Number.MAX_SAFE_INTEGER)).toBe(largest);
    expect(microYuanFigure(Number.MAX_SAFE_INTEGER)).toBe('9,007,199,254,740,991');
    expect(parseYuan('9007199254.740992', widest)).toEqual({ ok: false, problem: 'tooLarge' });
    // A rule that would allow more is still held to a safe integer.
    const wider = { ...widest, max: Number.MAX_VALUE };
    expect(parseYuan('9007199254.740992', wider)).toEqual({ ok: false, problem: 'tooLarge' });
    expect(parseYuan('1' + '0'.repeat(30), wider)).toEqual({ ok: false, problem: 'tooLarge' });
  });

  it('refuses a seventh decimal and a negative amount at every bound', () => {
    for (const typed of ['0.0000001', '0.0000010', `${largest}0`, '1.1234567'])
      expect(parseYuan(typed, widest)).toEqual({ ok: false, problem: 'decimals' });
    for (const typed of ['-0.000001', '-0', `-${largest}`, '-1'])
      expect(parseYuan(typed, widest)).toEqual({ ok: false, problem: 'negative' });
  });

  it('every micro-yuan near the bounds survives the round trip', () => {
    for (const micro of [
      0,
      1,
      2,
      999_999,
      1_000_000,
      1_000_001,
      Number.MAX_SAFE_INTEGER - 1,
      Number.MAX_SAFE_INTEGER,
    ])
      expect(parseYuan(yuanInputText(micro), widest)).toEqual({ ok: true, micro });
  });
});
