import { alertRounds } from './alerts/rounds.js';
import { pruneTombstonesPastRetention } from './read/deletions-retention.js';
import type { Services } from './services.js';
import { Dispatcher, type DispatcherOptions } from './webhooks/dispatcher.js';
import { checkRenewals, RENEWAL_CHECK_INTERVAL_MS } from './webhooks/events/renewals.js';
import { pruneDeliveryHistory } from './webhooks/queue/retention.js';

const RETENTION_INTERVAL_MS = 60 * 60_000;
/** How often failure alerts are checked and mailed: the failing stage is late by at most this. */
const ALERT_INTERVAL_MS = 60_000;

export interface Worker {
  dispatcher: Dispatcher;
  stop(): Promise<void>;
}

/**
 * The background part of `wsops serve`: delivery, the renewal check (at start and every 15 min),
 * failure alerts (every minute, on their own timer so a slow mail server never holds delivery),
 * pruning (delivery history, the deletions feed).
 */
export function startWorker(services: Services, options: DispatcherOptions = {}): Worker {
  const log = services.logger.child({ component: 'worker' });
  const dispatcher = new Dispatcher(services, options);
  dispatcher.start();
  const renewals = async () => {
    try {
      const r = await checkRenewals(services);
      if (r.events.length) {
        log.info({ events: r.events.length }, 'renewal warnings emitted');
        dispatcher.wake();
      }
    } catch (err) {
      log.error({ err }, 'renewal check failed; retried at the next check');
    }
  };
  const prune = async () => {
    try {
      const pruned = await pruneDeliveryHistory(services);
      if (pruned.attempts + pruned.jobs + pruned.events > 0) log.info(pruned, 'delivery history pruned');
    } catch (err) {
      log.error({ err }, 'pruning delivery history failed; retried in an hour');
    }
    try {
      const tombstones = await pruneTombstonesPastRetention(services);
      if (tombstones > 0) log.info({ tombstones }, 'deletions feed pruned');
    } catch (err) {
      log.error({ err }, 'pruning the deletions feed failed; retried in an hour');
    }
  };
  const alerts = alertRounds(services, log);
  void renewals();
  void prune();
  const timers = [
    setInterval(renewals, RENEWAL_CHECK_INTERVAL_MS),
    setInterval(prune, RETENTION_INTERVAL_MS),
    setInterval(alerts.run, ALERT_INTERVAL_MS),
  ];
  for (const t of timers) t.unref();
  return {
    dispatcher,
    async stop() {
      for (const t of timers) clearInterval(t);
      await dispatcher.stop();
      await alerts.close();
    },
  };
}
