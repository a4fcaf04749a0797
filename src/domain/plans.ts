/**
 * Plans are price lookup keys. A lookup key grants API access when it is one
 * of the configured tiers or starts with a tier followed by `_` or `-`
 * (DESIGN §2).
 */
export function grantsApi(lookupKey: string | null, tiers: readonly string[]): boolean {
  if (!lookupKey) return false;
  return tiers.some(
    (tier) => lookupKey === tier || lookupKey.startsWith(`${tier}_`) || lookupKey.startsWith(`${tier}-`),
  );
}

/**
 * `Me.plan`: the user's own granting lookup key, otherwise the granting key
 * of their earliest-joined organization; null when nothing grants access.
 * `orgPlans` must be ordered by the time the user joined.
 */
export function effectivePlan(
  ownPlan: string | null,
  orgPlans: readonly (string | null)[],
  tiers: readonly string[],
): string | null {
  if (grantsApi(ownPlan, tiers)) return ownPlan;
  for (const plan of orgPlans) if (grantsApi(plan, tiers)) return plan;
  return null;
}

const LOOKUP_KEY = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export function isValidLookupKey(value: string): boolean {
  return LOOKUP_KEY.test(value);
}
