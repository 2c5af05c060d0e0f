import type { Services } from '../services.js';
import { Dispatcher, type DispatcherOptions } from './dispatcher.js';
import { checkRenewals, RENEWAL_CHECK_INTERVAL_MS } from './renewals.js';
import { pruneDeliveryHistory } from './retention.js';

const RETENTION_INTERVAL_MS = 60 * 60_000;

export interface Worker {
  dispatcher: Dispatcher;
  stop(): Promise<void>;
}

/** The background part of `wsops serve`: delivery, the renewal check (at start and every 15 min), pruning. */
export function startWorker(
  services: Services,
  options: DispatcherOptions = {},
  log: (msg: string, err?: unknown) => void = () => {},
): Worker {
  const dispatcher = new Dispatcher(services, options);
  dispatcher.start();
  const renewals = async () => {
    try {
      const r = await checkRenewals(services);
      if (r.events.length) dispatcher.wake();
    } catch (err) {
      log('renewal check failed', err);
    }
  };
  const prune = () => pruneDeliveryHistory(services).catch((err: unknown) => log('pruning failed', err));
  void renewals();
  void prune();
  const timers = [setInterval(renewals, RENEWAL_CHECK_INTERVAL_MS), setInterval(prune, RETENTION_INTERVAL_MS)];
  for (const t of timers) t.unref();
  return {
    dispatcher,
    async stop() {
      for (const t of timers) clearInterval(t);
      await dispatcher.stop();
    },
  };
}
