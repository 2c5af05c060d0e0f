import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app.js';
import { buildInternalApp } from '../api/internal-app.js';
import { loadConfig } from '../config.js';
import { bootstrapDemo } from '../demo.js';
import { createLogger } from '../logger.js';
import { createServices } from '../services.js';
import { redactUrl } from '../store/database.js';
import { startWorker } from '../webhooks/worker.js';
import { parsePositiveInt, UsageError } from './output.js';

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description(
      'run the read API, the OpenAPI document, the webhook dispatcher and the renewal scheduler (and the internal listener when WSOPS_INTERNAL_PORT is set)',
    )
    .option('--port <n>', 'TCP port (default WSOPS_PORT or 8080)')
    .option('--only <part>', 'api or worker: run one part alone')
    .action(async (opts: { port?: string; only?: string }) => {
      if (opts.only !== undefined && opts.only !== 'api' && opts.only !== 'worker') {
        throw new UsageError(`--only must be api or worker; got "${opts.only}"`);
      }
      const config = loadConfig();
      const port = opts.port !== undefined ? parsePositiveInt('--port', opts.port, 65535) : config.port;
      const logger = createLogger({ level: config.logLevel });
      const services = await createServices(config, { logger });
      services.metrics.collectProcessMetrics();
      const app = buildApp(services);
      app.log.info(
        {
          database: redactUrl(config.databaseUrl),
          env: config.env,
          rate_limit_store: config.redisUrl ? 'redis' : 'memory',
        },
        'wsops starting',
      );
      if (process.env.WSOPS_PAGE_THREADS !== undefined) {
        // Accepted, not refused: a deployment that still sets it must not stop starting over a
        // tuning knob whose work is now done on the event loop (ADR 25).
        app.log.warn(
          'WSOPS_PAGE_THREADS is no longer used and will be refused by a later release: list pages are read on the event loop; run more API processes to use more cores. Remove the setting.',
        );
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
      const worker = opts.only === 'api' ? undefined : startWorker(services, { observer: services.metrics });
      let internal: FastifyInstance | undefined;
      if (config.internalPort !== undefined) {
        internal = buildInternalApp(services);
        const address = await internal.listen({ port: config.internalPort, host: config.internalHost });
        app.log.info({ address }, 'internal listener (operator API, /metrics, /readyz) running');
      }
      const shutdown = async () => {
        await worker?.stop();
        await internal?.close();
        await app.close();
        await services.close();
        process.exit(0);
      };
      process.once('SIGTERM', shutdown);
      process.once('SIGINT', shutdown);
      if (opts.only !== 'worker') {
        await app.listen({ port, host: config.host });
      } else {
        app.log.info({ worker_id: worker?.dispatcher.workerId }, 'delivery worker running');
      }
    });
}

function printDemo(baseUrl: string, port: number, workspaceId: string, key: string, records: number, consoleLink: string): void {
  const base = baseUrl.replace(/:\d+$/, `:${port}`);
  process.stdout.write(
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
