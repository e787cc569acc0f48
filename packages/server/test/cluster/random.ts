/** A seeded pseudo-random source (mulberry32): the same seed gives the same workload and faults. */
export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [0, bound). */
  below(bound: number): number;
  pick<T>(items: readonly T[]): T;
  /** A UUID made of the seeded stream (idempotency keys the run can reproduce). */
  uuid(): string;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
  const below = (bound: number) => Math.floor(next() * bound);
  return {
    next,
    below,
    pick: (items) => {
      const item = items[below(items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    uuid: () => {
      const hex = Array.from({ length: 32 }, () => below(16).toString(16)).join('');
      // Version 4, variant 10xx: a well-formed UUID, as the gateway requires.
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[below(4)]}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    },
  };
}
