import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { describeDatabase } from '../cli-kit/database-target.js';
import { ENV_FILE, namesFromEnvFile } from '../cli-kit/env-file.js';
import { print } from '../cli-kit/output.js';
import { readSettings, type SettingInForce } from '../config.js';
import { redactUrl, sqliteFileOf } from '../redact-url.js';
import { databaseFailure } from '../store/database-failure.js';
import { printable } from '../text-rules.js';
import type { ServedUrlPolicy } from '../webhooks/endpoints/served-url-policy.js';

interface Listener {
  name: 'public' | 'internal';
  host: string;
  port: number;
  /** Whether something accepts connections there now (the server, if it runs with these settings). */
  answering: boolean;
}

interface Status {
  database: { url: string; dialect: 'sqlite' | 'postgres'; path?: string; exists: boolean; error?: string };
  migrations: { applied: string[]; pending: string[] } | null;
  /** What the last `serve` that delivers recorded at its start (its settings may differ from these). */
  delivering_server: ServedUrlPolicy | null;
  listeners: Listener[];
  env_file: string | null;
  /** Where webhook failure alerts go: mailed through the SMTP server (its password hidden), or the console only. */
  alerts: { mail: boolean; smtp_url: string | null; from: string | null };
  /**
   * Workspaces whose failure alerts reach nobody: no console admin (`wsops workspace create`
   * makes none) and no added alert recipient. Null when the database could not be read.
   */
  workspaces_alerting_nobody: { id: string; name: string }[] | null;
  settings: (Omit<SettingInForce, 'from'> & { from: SettingInForce['from'] | '.env' })[];
}

/** `wsops status`: what the commands run here work on. Changes nothing; creates no database. */
export function statusCommand(program: Command): void {
  program
    .command('status')
    .description('show the database (and its migrations), the listeners and every setting in force, secrets hidden; changes nothing')
    .option('--json', 'machine output')
    .action(async (opts: { json?: boolean }) => {
      const status = await readStatus();
      print(!!opts.json, status, () => human(status));
      // A database that cannot be reached is a failure, for scripts and health checks.
      if (status.database.error !== undefined) process.exitCode = 1;
    });
}

async function readStatus(): Promise<Status> {
  const { config, inForce } = readSettings();
  const fromFile = namesFromEnvFile();
  const envFile = resolve(ENV_FILE);
  const url = config.databaseUrl;
  const file = sqliteFileOf(url);
  const sqlitePath = file === undefined ? undefined : resolve(file);
  const database: Status['database'] = {
    url: redactUrl(url),
    dialect: sqlitePath === undefined ? 'postgres' : 'sqlite',
    ...(sqlitePath === undefined ? {} : { path: sqlitePath }),
    exists: sqlitePath === undefined || existsSync(sqlitePath),
  };
  let migrations: Status['migrations'] = null;
  let delivering: Status['delivering_server'] = null;
  let alertingNobody: Status['workspaces_alerting_nobody'] = null;
  if (database.exists) {
    try {
      ({ migrations, delivering, alertingNobody } = await readDatabase(url));
    } catch (err) {
      const failure = databaseFailure(err, url);
      if (failure?.message.includes('does not exist')) database.exists = false;
      database.error = (failure ?? (err as Error)).message;
    }
  }
  const listeners: Listener[] = [
    { name: 'public', host: config.host, port: config.port, answering: await answers(config.host, config.port) },
  ];
  if (config.internalPort !== undefined && config.internalPort !== 0) {
    listeners.push({
      name: 'internal',
      host: config.internalHost,
      port: config.internalPort,
      answering: await answers(config.internalHost, config.internalPort),
    });
  }
  return {
    database,
    migrations,
    delivering_server: delivering,
    listeners,
    env_file: existsSync(envFile) ? envFile : null,
    alerts: {
      mail: config.smtpUrl !== undefined,
      smtp_url: config.smtpUrl === undefined ? null : redactUrl(config.smtpUrl),
      from: config.alertFrom ?? null,
    },
    workspaces_alerting_nobody: alertingNobody,
    settings: inForce.map((s) => (fromFile.has(s.env) ? { ...s, from: '.env' as const } : s)),
  };
}

async function readDatabase(
  url: string,
): Promise<Pick<Status, 'migrations'> & { delivering: Status['delivering_server']; alertingNobody: Status['workspaces_alerting_nobody'] }> {
  const { openDatabase } = await import('../store/database.js');
  const { migrationStatus } = await import('../store/migrate.js');
  const { servedUrlPolicy } = await import('../webhooks/endpoints/served-url-policy.js');
  const database = openDatabase(url);
  try {
    const migrations = await migrationStatus(database);
    // The settings table exists once the migrations that made it are applied.
    const current = migrations.pending.length === 0;
    const delivering = current ? ((await servedUrlPolicy(database.db)) ?? null) : null;
    // Failure alerts go to the console admins and the added recipients (src/alerts/recipients.ts).
    const alertingNobody = current
      ? await database.db
          .selectFrom('workspaces')
          .select(['id', 'name'])
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('console_admins')
                  .select('console_admins.id')
                  .whereRef('console_admins.workspace_id', '=', 'workspaces.id')
                  .where('console_admins.removed_at', 'is', null),
              ),
            ),
          )
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('alert_recipients')
                  .select('alert_recipients.email')
                  .whereRef('alert_recipients.workspace_id', '=', 'workspaces.id'),
              ),
            ),
          )
          .orderBy('id')
          .execute()
      : null;
    return { migrations, delivering, alertingNobody };
  } finally {
    await database.close().catch(() => {});
  }
}

/** Does something accept a TCP connection at host:port within 300 ms? An any-address host is tried on loopback. */
function answers(host: string, port: number): Promise<boolean> {
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return new Promise((done) => {
    const socket = connect({ host: target, port, timeout: 300 });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.once('connect', () => finish(true));
    socket.once('timeout', () => finish(false));
    socket.once('error', () => finish(false));
  });
}

function human(s: Status): string {
  const m = s.migrations;
  const db = s.database;
  const databaseLine = describeDatabase(db.url);
  const migrationsLine = db.error
    ? `unknown: ${db.error}`
    : !db.exists
      ? 'the database does not exist yet (`wsops migrate` or `wsops serve` creates it)'
      : m
        ? `${m.applied.length} applied, ${m.pending.length} pending${m.pending.length ? ` (${m.pending.join(', ')}; the next command applies them, or \`wsops migrate\`)` : ''}`
        : '-';
  const width = Math.max(...s.settings.map((x) => x.env.length));
  const valueWidth = Math.max(...s.settings.map((x) => x.value.length));
  return [
    `database    ${databaseLine}`,
    `migrations  ${migrationsLine}`,
    ...s.listeners.map(
      (l, i) =>
        `${i === 0 ? 'listeners' : ''.padEnd(9)}   ${l.name.padEnd(8)} ${l.host}:${l.port}  ${l.answering ? 'answering' : 'nothing answering'}`,
    ),
    ...(s.listeners.length === 1 ? ['            internal none (WSOPS_INTERNAL_PORT is unset)'] : []),
    `server      ${
      s.delivering_server
        ? `the last \`wsops serve\` that delivers started ${s.delivering_server.started_at}, with WSOPS_ALLOW_PRIVATE_WEBHOOKS=${s.delivering_server.allow_private_webhooks}`
        : 'no `wsops serve` has delivered from this database yet'
    }`,
    `alerts      ${
      s.alerts.mail
        ? `webhook failure alerts are mailed to the console admins through ${s.alerts.smtp_url}, from ${s.alerts.from}`
        : 'webhook failure alerts are shown in the console only (set WSOPS_SMTP_URL and WSOPS_ALERT_FROM to mail them)'
    }`,
    ...alertLines(s.workspaces_alerting_nobody),
    `.env        ${s.env_file ?? `none in ${join(process.cwd())}`}`,
    'settings    of commands run here (a running server keeps those it read at its start)',
    ...s.settings.map((x) => `  ${x.env.padEnd(width)}  ${x.value.padEnd(valueWidth)}  ${x.from === 'unset' ? '' : x.from}`.trimEnd()),
  ].join('\n');
}

/** The workspaces whose failure alerts reach nobody, and the commands that give them someone. */
function alertLines(nobody: Status['workspaces_alerting_nobody']): string[] {
  if (nobody === null) return [];
  if (nobody.length === 0) return ['            every workspace has a console admin or an alert recipient'];
  const shown = nobody.slice(0, 5).map((w) => `${w.id} (${printable(w.name.slice(0, 40))})`);
  const more = nobody.length > shown.length ? `, and ${nobody.length - shown.length} more` : '';
  return [
    `            ${nobody.length === 1 ? 'a workspace has no console admin and no alert recipient, so its' : `${nobody.length} workspaces have no console admin and no alert recipient, so their`} failure alerts reach nobody: ${shown.join(', ')}${more}`,
    '            add one: wsops admin create --workspace WORKSPACE_ID --email EMAIL (or wsops alerts recipients --add EMAIL)',
  ];
}
