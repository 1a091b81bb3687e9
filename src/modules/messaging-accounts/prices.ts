// decisions §7: what a message costs its messaging account, and whether a balance pays it. The one place of the
// price and of the tolerance that the balance's SQL uses too (accounts.repo.ts).

/**
 * Prices are decimal amounts held as numbers: sums of fractions drift by a few units of the last place, so a balance
 * that is exactly one price (after such sums) still pays it.
 */
export const BALANCE_TOLERANCE = 1e-9;

/** decisions §7: each message costs its account's price for the template's category (1 when none is set). */
export function priceOf(prices: unknown, category: string): number {
  const price = (prices as Record<string, unknown> | null)?.[category];
  return typeof price === 'number' && price >= 0 ? price : 1;
}

/** The balance pays `price` (decisions §7). */
export function canPay(balance: number, price: number): boolean {
  return balance + BALANCE_TOLERANCE >= price;
}
