/**
 * The mirror's configuration, from the environment and the arguments. Every mistake is one
 * line saying what to fix (the CLI prints it and exits 2 before anything is written).
 */
import { parseArgs } from 'node:util';
import { DEFAULT_DATABASE_URL, parseDatabaseUrl } from './open-store.js';
import { type RegisterDescriptor, selectRegisters } from './registers.js';
import { DEFAULT_OVERLAP_MS } from './sync.js';

export class MirrorConfigError extends Error {
  override name = 'MirrorConfigError';
}

export interface MirrorConfig {
  apiKey: string;
  baseUrl: string;
  databaseUrl: string;
  registers: RegisterDescriptor[];
  mode: 'once' | 'watch' | 'listen';
  full: boolean;
  overlapMs: number;
  intervalMs: number;
  listenPort: number | undefined;
  webhookSecrets: string[];
  pageSize: number;
  json: boolean;
}

export const USAGE = `usage: wsops-mirror [--once | --watch [--interval SECONDS] | --listen PORT] [--registers r1,r2] [--full]
                    [--overlap MINUTES] [--json]
environment: WSOPS_API_KEY (required), WSOPS_BASE_URL (default http://127.0.0.1:8080),
             WSOPS_MIRROR_DATABASE_URL (default ${DEFAULT_DATABASE_URL}), WSOPS_WEBHOOK_SECRET (for --listen; comma-separated during a rotation)`;

function number(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new MirrorConfigError(`--${name} must be a number from ${min} to ${max}; got "${text}"`);
  }
  return value;
}

export function parseConfig(argv: readonly string[], env: Record<string, string | undefined>): MirrorConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        once: { type: 'boolean' },
        watch: { type: 'boolean' },
        listen: { type: 'string' },
        interval: { type: 'string' },
        registers: { type: 'string' },
        full: { type: 'boolean' },
        overlap: { type: 'string' },
        'page-size': { type: 'string' },
        json: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new MirrorConfigError(`${(err as Error).message.split('\n')[0]}\n${USAGE}`);
  }
  const modes = [values.once && 'once', values.watch && 'watch', values.listen !== undefined && 'listen'].filter(Boolean);
  if (modes.length > 1)
    throw new MirrorConfigError(`choose one of --once, --watch and --listen (got ${modes.map((m) => `--${m}`).join(' and ')})`);
  const apiKey = env.WSOPS_API_KEY ?? '';
  if (apiKey.trim() === '')
    throw new MirrorConfigError('WSOPS_API_KEY is not set: create a key with the read scopes of the registers to mirror');
  const baseUrl = env.WSOPS_BASE_URL ?? 'http://127.0.0.1:8080';
  if (!/^https?:\/\/[^/]/.test(baseUrl)) throw new MirrorConfigError(`WSOPS_BASE_URL must be an http(s) address; got "${baseUrl}"`);
  const databaseUrl = env.WSOPS_MIRROR_DATABASE_URL ?? DEFAULT_DATABASE_URL;
  try {
    parseDatabaseUrl(databaseUrl);
  } catch (err) {
    throw new MirrorConfigError((err as Error).message);
  }
  let registers: RegisterDescriptor[];
  try {
    const names =
      typeof values.registers === 'string'
        ? values.registers
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [];
    registers = selectRegisters(names);
  } catch (err) {
    throw new MirrorConfigError(`--registers: ${(err as Error).message}`);
  }
  const mode = (modes[0] as MirrorConfig['mode'] | undefined) ?? 'once';
  const listenPort = mode === 'listen' ? number('listen', values.listen as string, 0, 1, 65535) : undefined;
  const webhookSecrets = (env.WSOPS_WEBHOOK_SECRET ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (mode === 'listen' && webhookSecrets.length === 0) {
    throw new MirrorConfigError("--listen needs WSOPS_WEBHOOK_SECRET: the endpoint's signing secret, to verify each delivery");
  }
  return {
    apiKey,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    databaseUrl,
    registers,
    mode,
    full: values.full === true,
    overlapMs: number('overlap', values.overlap as string | undefined, DEFAULT_OVERLAP_MS / 60_000, 0, 24 * 60) * 60_000,
    intervalMs: number('interval', values.interval as string | undefined, 60, 1, 86_400) * 1000,
    listenPort,
    webhookSecrets,
    pageSize: number('page-size', values['page-size'] as string | undefined, 1000, 1, 1000),
    json: values.json === true,
  };
}
