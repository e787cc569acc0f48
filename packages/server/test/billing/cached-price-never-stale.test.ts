import { afterEach, expect, it } from 'vitest';
import { PriceBook } from '../../src/billing/price-book.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';

const TTL_MS = 60_000;

describeEachDialect(
  'the price read without a promise is never older than the cache allows, on $name',
  (dialect) => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.close();
      gateway = undefined;
    });

    it('answers from memory only what currentFor would, and nothing once expired or forgotten', async () => {
      gateway = await startGateway(dialect);
      const clock = manualClock();
      const prices = new PriceBook(
        gateway.services.store.db,
        clock,
        gateway.services.catalog.models,
        TTL_MS,
      );
      // Never read yet: nothing in memory, the route must await the database read.
      expect(prices.cachedFor('sim-chat')).toBeUndefined();
      const read = await prices.currentFor('sim-chat');
      expect(prices.cachedFor('sim-chat')).toBe(read);

      clock.advance(TTL_MS - 1);
      expect(prices.cachedFor('sim-chat')).toBe(read);
      // Expired: a price changed by another instance must not be served from memory any longer.
      clock.advance(1);
      expect(prices.cachedFor('sim-chat')).toBeUndefined();

      await prices.currentFor('sim-chat');
      expect(prices.cachedFor('sim-chat')).toBeDefined();
      // A change notice (store/change-feed.ts) empties memory at once.
      prices.forget('sim-chat');
      expect(prices.cachedFor('sim-chat')).toBeUndefined();
    });
  },
);
