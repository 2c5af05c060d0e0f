/**
 * `/metrics` of a `wsops serve --processes N`: the primary serves it on the internal listener and
 * asks each API process for its registry over the cluster's IPC channel at every scrape; the
 * answers are added up with the primary's own (Metrics.text). A process that does not answer
 * within the timeout is left out of that scrape (`wsops_metrics_processes_missing` says how many)
 * rather than failing it.
 */
import cluster from 'node:cluster';
import { Gauge, Registry } from 'prom-client';
import type { Metrics, MetricsJson } from './metrics.js';

const ASK = 'wsops:metrics?';
const ANSWER = 'wsops:metrics';
/** Well below a Prometheus scrape timeout (10 s by default). */
const ANSWER_TIMEOUT_MS = 2000;

interface Ask {
  type: typeof ASK;
  id: number;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  metrics: MetricsJson;
}

/**
 * In an API process: answers the primary's requests with this process's metrics. A registry
 * that fails to read is reported to `onError` and left unanswered (the primary counts the
 * process missing from that scrape): rejected with nothing awaiting it, it would end the process.
 */
export function answerMetricRequests(metrics: Metrics, onError: (err: unknown) => void): void {
  process.on('message', (message: Ask) => {
    if (message?.type !== ASK) return;
    void metrics
      .json()
      .then((json) => process.send?.({ type: ANSWER, id: message.id, metrics: json } satisfies Answer))
      .catch(onError);
  });
}

let nextId = 0;
const missingRegistry = new Registry();
const missingGauge = new Gauge({
  name: 'wsops_metrics_processes_missing',
  help: 'API processes that did not send their metrics for this scrape within 2 s (their counts are missing from it).',
  registers: [missingRegistry],
});

/** In the primary: the metrics of every connected API process. */
export async function askWorkersForMetrics(): Promise<MetricsJson[]> {
  const id = nextId++;
  const workers = Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected());
  const answers = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<MetricsJson | undefined>((resolve) => {
          if (!worker) return resolve(undefined);
          const timer = setTimeout(() => finish(undefined), ANSWER_TIMEOUT_MS);
          const onMessage = (message: Answer) => {
            if (message?.type === ANSWER && message.id === id) finish(message.metrics);
          };
          const finish = (json: MetricsJson | undefined) => {
            clearTimeout(timer);
            worker.off('message', onMessage);
            worker.off('exit', onExit);
            resolve(json);
          };
          const onExit = () => finish(undefined);
          worker.on('message', onMessage);
          worker.once('exit', onExit);
          worker.send({ type: ASK, id } satisfies Ask);
        }),
    ),
  );
  const missing = answers.filter((a) => a === undefined).length;
  missingGauge.set(missing);
  return [...answers.filter((a): a is MetricsJson => a !== undefined), (await missingRegistry.getMetricsAsJSON()) as MetricsJson];
}
