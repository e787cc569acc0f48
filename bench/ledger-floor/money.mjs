// The floors' money, shared by bench/ledger-floor.mjs (SQLite) and bench/ledger-floor-pg.mjs
// (PostgreSQL): the account's opening balance, the flat price, and a store's refusal for funds.

export const INITIAL_BALANCE = 1_000_000_000_000_000;
export const PRICE_PER_TOKEN = 5; // micro-yuan, input and output alike: a flat rule for the floor

export const priced = (usage, reserve) =>
  Math.min(
    reserve,
    ((usage?.prompt_tokens | 0) + (usage?.completion_tokens | 0)) * PRICE_PER_TOKEN,
  );
export const insufficient = () => Object.assign(new Error('insufficient funds'), { status: 402 });
