/** A destination made runnable for a tee (on the core, or on a pool's poller). */
import { compileFilter } from "./filter.js";
import type { PoolDestinationWire, RuntimeDestination } from "./types.js";

/** Opens its sealed secrets and compiles its filter; throws (a SecretKeyError) when a secret cannot be opened with this key. */
export function runnable(w: PoolDestinationWire, secrets: { unseal(sealed: string): string }): RuntimeDestination {
  const { community_sealed, service_account_sealed, filter, ...rest } = w;
  return {
    ...rest,
    community: community_sealed === null ? null : secrets.unseal(community_sealed),
    service_account_json: service_account_sealed === null ? null : secrets.unseal(service_account_sealed),
    filter: compileFilter(filter),
    unfiltered: !filter || filter.conditions.length === 0,
  };
}
