/**
 * The endpoints an event is written for, as SQL conditions on `webhook_endpoints e`: the
 * outbox (webhooks/events/outbox.ts) and the domain actions' fixed statements of both dialects
 * (dialects/*-actions.ts) read them from here, so all three say the same.
 *
 * Active endpoints get `pending` jobs. Endpoints that owe deliveries they will send once
 * switched on again get `held` ones: disabled for failures (nothing is lost, CONTRACT
 * "Webhooks"), and switched on again but not yet re-verified (`verified_at` set), so the
 * seconds a re-verification takes lose nothing either. A user's own disable takes no events:
 * the user said stop, and the events API is how to catch up (README, ADR 51). A never-verified
 * endpoint takes none either: it has not yet proved the URL is its owner's.
 */
export const RECEIVES_EVENTS = `(e.status = 'active' OR (e.status = 'disabled' AND e.disabled_reason = 'failures')
    OR (e.status = 'unverified' AND e.verified_at IS NOT NULL))`;

/** Whether a receiving endpoint's jobs are held (1) rather than pending (0). */
export const HOLDS_EVENTS = `CASE WHEN e.status = 'active' THEN 0 ELSE 1 END`;
