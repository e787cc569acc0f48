// The ledger rules a floor's figures must satisfy, whichever database they were read from:
// sqlite-checks.mjs and pg-checks.mjs read the figures; `--check` and the self-tests judge by
// these.

/**
 * The ledger rules of a floor's store, whatever its database (ledger-floor-pg.mjs reads the same
 * figures from PostgreSQL). The event log: every finish has its claim, nothing captured twice,
 * a release only of what was held, what is held is what open claims hold, what was captured is
 * what left the balances, and the read model (where built) equals the log up to its cursor.
 */
export const eventLogClean = (figures) =>
  figures.requests > 0 &&
  (figures.projectedTo === undefined || figures.readModelMismatches === 0) &&
  figures.finishedWithoutClaim === 0 &&
  figures.capturedTwice === 0 &&
  figures.releasedOtherThanHeld === 0 &&
  figures.held === figures.openHeld &&
  figures.captured === figures.balanceMoved;

/** The tables: one open hold per unfinished record, one capture each, journal and balances agree. */
export const tablesClean = (figures) =>
  figures.requests > 0 &&
  figures.unsucceeded === figures.openHolds &&
  figures.capturedTwice === 0 &&
  figures.held === figures.openHeld &&
  figures.balanceMoved === figures.journalMoved &&
  figures.captured === figures.balanceMoved;
