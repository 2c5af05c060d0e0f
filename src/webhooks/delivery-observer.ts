/**
 * What the dispatcher reports about each attempt and endpoint change, for metrics and logs.
 * The dispatcher depends on this interface only; the metrics registry implements it.
 */
export interface DeliveryObserver {
  /** One recorded attempt. `commitToAttemptMs` is set on an event's first attempt only. */
  attempted(outcome: 'succeeded' | 'failed', errorClass: string | null, commitToAttemptMs: number | null): void;
}

export const NO_OBSERVER: DeliveryObserver = { attempted() {} };
