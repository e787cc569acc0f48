import type { Channel } from './channels.js';

/** A number in [0, 1), injected so tests pick deterministically (a seeded generator). */
export type RandomSource = () => number;

/**
 * Picks one channel among the usable ones: the highest priority present, then by weight within
 * it (a channel of weight 3 is picked three times as often as one of weight 1). `undefined`
 * when none is usable.
 */
export function pickChannel(usable: readonly Channel[], random: RandomSource): Channel | undefined {
  if (usable.length === 0) return undefined;
  const top = Math.max(...usable.map((channel) => channel.priority));
  const tier = usable.filter((channel) => channel.priority === top);
  const total = tier.reduce((sum, channel) => sum + channel.weight, 0);
  let point = random() * total;
  for (const channel of tier) {
    point -= channel.weight;
    if (point < 0) return channel;
  }
  return tier[tier.length - 1];
}

/** A small seeded generator (mulberry32) for tests and reproducible runs. */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}
