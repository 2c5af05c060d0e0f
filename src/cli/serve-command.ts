import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { onDatabase } from '../cli-kit/database-target.js';
import { parsePositiveInt, UsageError } from '../cli-kit/output.js';
import { answerMetricRequests, askWorkersForMetrics } from '../cluster-metrics.js';
import { type Config, RETIRED_SETTINGS, readSettings, type SettingInForce } from '../config.js';
import { bootstrapDemo } from '../demo.js';
import { buildApp } from '../http/app.js';
import { buildInternalApp } from '../http/internal-app.js';
import { createLogger, type Logger } from '../logger.js';
import { createServices } from '../services.js';
import { redactUrl } from '../store/database.js';
import { recordServedUrlPolicy } from '../webhooks/endpoints/served-url-policy.js';
import { startWorker } from '../worker.js';
import { stopWithLauncher } from './launcher-watch.js';
import { checkListeners, listenRefusal, type PlannedListener } from './listener-check.js';
import { type ApiProcesses, forkApiProcesses } from './serve-processes.js';

interface ServeOptions {
  port?: string;
  only?: string;
  processes?: string;
}

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description(
      'run the read API, the OpenAPI document, the webhook dispatcher and the renewal scheduler (and the internal listener when WSOPS_INTERNAL_PORT is set)',
    )
    .option('--port <n>', 'TCP port (default WSOPS_PORT or 8080)')
    .option('--only <part>', 'api or worker: run one part alone')
    .option(
      '--processes <n>',
      'API processes sharing the port (default 1, at most 4 per CPU); above 1 the webhook dispatcher, the scheduler and the internal listener run once, in the primary process',
    )
    .action(async (opts: ServeOptions) => {
      if (opts.only !== undefined && opts.only !== 'api' && opts.only !== 'worker') {
        throw new UsageError(`--only must be api or worker; got "${opts.only}"`);
      }
      const { config, inForce } = readSettings();
      const port = opts.port !== undefined ? parsePositiveInt('--port', opts.port, 65535) : config.port;
      const logger = createLogger({ level: config.logLevel });
      if (cluster.isWorker) return serveApiProcess(config, port, logger);
      const processes = checkProcesses(opts, config);
      if (processes > 1 && !config.redisUrl) {
        logger.warn(
          { processes },
          'WSOPS_REDIS_URL is unset: each API process counts rate limits and failed authentications on its own, so a client gets up to that many times its budget. Set WSOPS_REDIS_URL to share them; it is required when WSOPS_ENV=live.',
        );
      }
      return serveMain(config, inForce, port, logger, opts.only, processes, opts.port !== undefined ? '--port' : 'WSOPS_PORT');
    });
}

/** `--processes`: 1 to 4 per CPU; above 1 only where every process can reach the same data. */
function checkProcesses(opts: ServeOptions, config: Config): number {
  if (opts.processes === undefined) return 1;
  const cpus = availableParallelism();
  const max = cpus * 4;
  if (!/^\d+$/.test(opts.processes) || Number(opts.processes) < 1 || Number(opts.processes) > max) {
    throw new UsageError(
      `--processes must be a whole number from 1 to ${max} (4 per CPU; this machine has ${cpus}); got "${opts.processes}". One per CPU is a good start.`,
    );
  }
  const processes = Number(opts.processes);
  if (processes === 1) return 1;
  if (opts.only === 'worker') {
    throw new UsageError(
      '--processes runs several API processes; --only worker runs none. Run one worker with `wsops serve --only worker`.',
    );
  }
  if (config.databaseUrl === 'sqlite::memory:') {
    throw new UsageError(
      '--processes above 1 needs a database the processes share: sqlite::memory: is private to one process. Use sqlite:PATH or postgres://...',
    );
  }
  if (!config.redisUrl && config.env === 'live') {
    throw new UsageError(
      '--processes above 1 needs WSOPS_REDIS_URL when WSOPS_ENV=live: without it each process counts rate limits and failed authentications on its own, so every client would get that many times its budget.',
    );
  }
  return processes;
}

/**
 * The process `wsops serve` starts. With one process it does everything; with several it is the
 * cluster's primary: it migrates, runs the demo, the webhook dispatcher and the scheduler (so each
 * event is delivered by one worker) and the internal listener (whose /metrics adds up every
 * process's counts), forks the API processes and stops them all on SIGTERM or SIGINT.
 */
async function serveMain(
  config: Config,
  inForce: SettingInForce[],
  port: number,
  logger: Logger,
  only: string | undefined,
  processes: number,
  portSetting: string,
): Promise<void> {
  const servesApi = processes === 1 && only !== 'worker';
  const publicListener: PlannedListener = { port, host: config.host, setting: portSetting, hostSetting: 'WSOPS_HOST' };
  const internalListener: PlannedListener | undefined =
    config.internalPort === undefined
      ? undefined
      : { port: config.internalPort, host: config.internalHost, setting: 'WSOPS_INTERNAL_PORT', hostSetting: 'WSOPS_INTERNAL_HOST' };
  // Before the database is migrated, the demo written or anything printed.
  await checkListeners([...(only !== 'worker' ? [publicListener] : []), ...(internalListener ? [internalListener] : [])]);
  const services = await onDatabase(config.databaseUrl, () => createServices(config, { logger }), { create: true });
  services.metrics.collectProcessMetrics(metricFailure(logger));
  const app = buildApp(services);
  app.log.info(
    {
      database: redactUrl(config.databaseUrl),
      env: config.env,
      rate_limit_store: config.redisUrl ? 'redis' : 'memory',
      processes,
      // Every setting in force, secrets hidden and passwords redacted (src/config.ts).
      settings: Object.fromEntries(inForce.map((st) => [st.env, st.value])),
    },
    'wsops starting',
  );
  for (const [name, why] of Object.entries(RETIRED_SETTINGS)) {
    if (process.env[name] !== undefined) {
      app.log.warn(`${name} is no longer used and will be refused by a later release: ${why}. Remove the setting.`);
    }
  }
  if (config.secret === undefined) {
    // Only reachable in test: loadConfig refuses a live deployment without WSOPS_SECRET.
    app.log.warn(
      'WSOPS_SECRET is unset: the generated server secret is stored in the database, beside the webhook signing secrets it encrypts, so anyone with a copy of the database can read them. Set WSOPS_SECRET (openssl rand -hex 32) outside the database; it is required when WSOPS_ENV=live.',
    );
  }
  if (config.demo) {
    const demo = await bootstrapDemo(services);
    if (demo) printDemo(config.baseUrl, port, demo.workspaceId, demo.key, demo.records, demo.consoleLink);
  }
  const worker = only === 'api' ? undefined : startWorker(services, { observer: services.metrics });
  let internal: FastifyInstance | undefined;
  let api: ApiProcesses | undefined;
  const shutdown = once(async (code: number) => {
    await api?.stop();
    await worker?.stop();
    await internal?.close();
    await app.close();
    await services.close();
    process.exit(code);
  });
  // At once after the worker starts: it may be sending by the next line, and a SIGTERM before
  // these handlers would kill it with attempts in flight, unrecorded and leased.
  process.once('SIGTERM', () => shutdown(0));
  process.once('SIGINT', () => shutdown(0));
  if (worker) {
    // So `wsops endpoint create` can warn when this server would refuse what it registers.
    await recordServedUrlPolicy(services.database.db, {
      allow_private_webhooks: config.allowPrivateWebhooks,
      started_at: new Date(services.clock()).toISOString(),
    });
  }
  if (processes > 1) services.metrics.gatherFrom(askWorkersForMetrics);
  if (internalListener) {
    internal = buildInternalApp(services);
    const address = await listenOn(internal, internalListener);
    app.log.info({ address }, 'internal listener (operator API, /metrics, /readyz) running');
  }
  stopWithLauncher(() => {
    app.log.info('the npm process that started this server is gone; stopping');
    void shutdown(0);
  });
  if (processes > 1) {
    // Forked after migrating: the API processes skip migrations (createServices' `migrate: false`).
    api = forkApiProcesses(processes, logger, () => shutdown(1));
    services.metrics.observeApiProcesses(api.serving);
    await api.listening;
    app.log.info({ port, processes }, 'API processes listening');
  } else if (servesApi) {
    await listenOn(app, publicListener);
  } else {
    app.log.info({ worker_id: worker?.dispatcher.workerId }, 'delivery worker running');
  }
  keepServingThroughUncaughtErrors(logger);
}

/** What a process metric that failed to record says, once (Metrics.collectProcessMetrics). */
function metricFailure(logger: Logger) {
  return (err: unknown, metric: string) =>
    logger.error({ err, metric }, `the process metric ${metric} failed to record; its failing samples are dropped`);
}

/**
 * Once serving, an exception no caller catches (thrown in a timer, an observer or an event
 * listener, or a rejected promise nothing awaits) is logged with its stack, and the process goes
 * on serving. Node's default, exiting, ends every tenant's requests in flight, and lets whatever
 * makes such a callback throw stop the service for everyone, as one tenant's SCIM PATCH did
 * (issue 56). Going on is sound here because such a callback leaves only its own work undone:
 * every write is a database transaction, rolled back unless committed, and the worker's loops
 * and rounds catch their own failures and run again. Before serving, a failure still ends the
 * process, so a start that went wrong is never left half up.
 */
function keepServingThroughUncaughtErrors(logger: Logger): void {
  process.on('uncaughtException', (err, origin) => {
    logger.error({ err, origin }, 'an error no caller caught (logged; the process goes on serving)');
  });
}

/** Listens; a port taken since it was checked is the same one-line refusal. */
async function listenOn(app: FastifyInstance, listener: PlannedListener): Promise<string> {
  try {
    return await app.listen({ port: listener.port, host: listener.host });
  } catch (err) {
    throw listenRefusal(err, listener) ?? err;
  }
}

/**
 * One API process of a cluster: the public listener only. The port is shared through the
 * primary (Node's cluster hands each connection to one process in turn); the database gauges
 * and the background work are the primary's.
 */
async function serveApiProcess(config: Config, port: number, logger: Logger): Promise<void> {
  const services = await createServices(config, { logger, migrate: false });
  services.metrics.collectProcessMetrics(metricFailure(logger));
  services.metrics.dropDatabaseGauges();
  answerMetricRequests(services.metrics, (err) => logger.error({ err }, 'this process could not read its metrics for a scrape'));
  const app = buildApp(services);
  const shutdown = once(async () => {
    await app.close();
    await services.close();
    process.exit(0);
  });
  process.once('SIGTERM', () => shutdown());
  process.once('SIGINT', () => shutdown());
  // The primary is gone (killed without a chance to stop us): stop too rather than serve orphaned.
  process.once('disconnect', () => shutdown());
  await app.listen({ port, host: config.host });
  keepServingThroughUncaughtErrors(logger);
}

/** `fn` run at most once: a second signal (SIGINT from a terminal and SIGTERM from the primary) joins the first. */
function once<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let running: Promise<void> | undefined;
  return (...args) => {
    running ??= fn(...args);
    return running;
  };
}

/**
 * The demo's key, curl line and console link, for a person. On a terminal they go to stdout with
 * the readable log; when stdout is piped it carries JSON log lines only (a collector or `jq`
 * reads every line as JSON), so they go to stderr, which still reaches the terminal.
 */
function printDemo(baseUrl: string, port: number, workspaceId: string, key: string, records: number, consoleLink: string): void {
  const base = baseUrl.replace(/:\d+$/, `:${port}`);
  (process.stdout.isTTY ? process.stdout : process.stderr).write(
    [
      '',
      `Demo workspace ${workspaceId} created with ${records} records.`,
      `Demo API key (shown once; create more with bin/wsops key create): ${key}`,
      '',
      'Try it:',
      `  curl -H "Authorization: Bearer ${key}" "${base}/api/v1/assets?limit=2"`,
      '',
      `Console (one-time sign-in link for demo.admin@example.com, valid 24 hours): ${consoleLink.replace(baseUrl, base)}`,
      '',
    ].join('\n'),
  );
}
