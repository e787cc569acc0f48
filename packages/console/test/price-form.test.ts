import { MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import {
  fieldText,
  fieldTexts,
  formFields,
  parseField,
  parsePricesJson,
  withField,
} from '../src/price-form.js';

/**
 * The operator's price editor's conversions (src/price-form.ts): yuan per million tokens typed in
 * a field to the micro-yuan the JSON carries and back, exactly (parseYuan / yuanInputText).
 */
describe('price form', () => {
  it('has an input per token field for chat and OCR, input alone for embeddings and rerank, none for media', () => {
    expect(formFields(['chat'])).toEqual([
      'input_per_million_tokens',
      'cached_input_per_million_tokens',
      'cache_write_per_million_tokens',
      'cache_write_1h_per_million_tokens',
      'output_per_million_tokens',
      'reasoning_per_million_tokens',
      'audio_input_per_million_tokens',
      'image_input_per_million_tokens',
      'audio_output_per_million_tokens',
      'image_output_per_million_tokens',
    ]);
    expect(formFields(['ocr'])).toHaveLength(10);
    expect(formFields(['embeddings'])).toEqual(['input_per_million_tokens']);
    expect(formFields(['rerank'])).toEqual(['input_per_million_tokens']);
    expect(formFields(['images'])).toEqual([]);
    expect(formFields(['videos'])).toEqual([]);
    expect(formFields(['h3'])).toEqual([]);
  });

  it('converts typed yuan to exact micro-yuan in the JSON, keeping every other field', () => {
    const prices = { input_per_million_tokens: 2_000_000, tiers: [{ above_input_tokens: 1 }] };
    expect(withField(prices, 'input_per_million_tokens', '2.5')).toEqual({
      input_per_million_tokens: 2_500_000,
      tiers: [{ above_input_tokens: 1 }],
    });
    expect(withField(prices, 'output_per_million_tokens', '0.000001')).toMatchObject({
      output_per_million_tokens: 1,
    });
    expect(withField(prices, 'input_per_million_tokens', '0.1')).toMatchObject({
      input_per_million_tokens: 100_000,
    });
    expect(withField(prices, 'input_per_million_tokens', '10000000')).toMatchObject({
      input_per_million_tokens: MAX_MOVEMENT_MICRO_YUAN,
    });
    // Empty leaves the field out; a refused value leaves the JSON as it was.
    expect(withField(prices, 'input_per_million_tokens', ' ')).toEqual({
      tiers: [{ above_input_tokens: 1 }],
    });
    expect(withField(prices, 'input_per_million_tokens', '1.0000001')).toBe(prices);
  });

  it('refuses bad yuan with parseYuan’s reasons', () => {
    expect(parseField('')).toBeNull();
    expect(parseField('2.5')).toEqual({ ok: true, micro: 2_500_000 });
    expect(parseField('0')).toEqual({ ok: true, micro: 0 });
    expect(parseField('1.0000001')).toEqual({ ok: false, problem: 'decimals' });
    expect(parseField('-1')).toEqual({ ok: false, problem: 'negative' });
    expect(parseField('1,5')).toEqual({ ok: false, problem: 'format' });
    expect(parseField('10000000.000001')).toEqual({ ok: false, problem: 'tooLarge' });
  });

  it('shows the JSON’s micro-yuan as exact yuan, and anything else as it is', () => {
    const prices = { input_per_million_tokens: 2_500_000, output_per_million_tokens: 92, x: 1 };
    expect(fieldTexts(prices, ['input_per_million_tokens', 'output_per_million_tokens'])).toEqual({
      input_per_million_tokens: '2.5',
      output_per_million_tokens: '0.000092',
    });
    expect(fieldText(prices, 'reasoning_per_million_tokens')).toBe('');
    // Not whole micro-yuan: shown so that parseYuan refuses it, never as other yuan.
    const shown = (value: unknown) =>
      fieldText({ input_per_million_tokens: value }, 'input_per_million_tokens');
    expect(shown(1.5)).toBe('0.0000015');
    expect(parseField(shown(1.5))).toEqual({ ok: false, problem: 'decimals' });
    expect(shown(2_500_000.5)).toBe('2.5000005');
    expect(parseField(shown(-3))).toEqual({ ok: false, problem: 'negative' });
    expect(parseField(shown(1e20))).toEqual({ ok: false, problem: 'tooLarge' });
    expect(parseField(shown('7'))).toEqual({ ok: false, problem: 'format' });
    expect(parseField(shown(null))).toEqual({ ok: false, problem: 'format' });
  });

  it('reads only a JSON object as prices', () => {
    expect(parsePricesJson('{"a": 1}')).toEqual({ a: 1 });
    expect(parsePricesJson('[1]')).toBeNull();
    expect(parsePricesJson('null')).toBeNull();
    expect(parsePricesJson('{')).toBeNull();
  });
});
