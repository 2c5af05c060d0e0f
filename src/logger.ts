/**
 * The one logger: pino, JSON lines when stdout is piped (for log collectors), a readable
 * coloured line per event on a terminal. Passed down explicitly (Services.logger); nothing
 * else in the code writes to stderr/stdout for logging.
 */
import { createRequire } from 'node:module';
import { type Logger as PinoLogger, pino } from 'pino';
import type PinoPretty from 'pino-pretty';

export type Logger = PinoLogger;

export interface LoggerOptions {
  level: string;
  /** Force JSON (true) or pretty (false); default: pretty only when stdout is a terminal. */
  json?: boolean;
}

export function createLogger(options: LoggerOptions): Logger {
  const json = options.json ?? process.stdout.isTTY !== true;
  const base = {
    level: options.level,
    base: { service: 'wsops' },
    // A secret must never reach a log line, even by accident in an error's context.
    redact: { paths: ['*.authorization', '*.headers.authorization', '*.secret', '*.key', '*.password', '*.token'], censor: '[redacted]' },
  };
  if (json) return pino(base);
  // Loaded only for a terminal (pino-pretty is CommonJS): not by every CLI command (ADR 21).
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', sync: true }));
}

/** A logger that writes nothing: the default for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Fastify's per-request logger, made only when a line is written at an enabled level. A pino
 * child is not free (its bindings are serialized and the redaction set up; ADR 15), which every
 * request paid although almost none logs anything: request logging is off, and refusals log at
 * debug. Bindings and options are those Fastify passes (the request id).
 */
class LazyChildLogger {
  private made: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}

  private real(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  private write(level: Level, args: unknown[]): void {
    if (this.parent.isLevelEnabled(level)) (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }
  set level(value: string) {
    this.real().level = value;
  }
  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }
  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.real().child(bindings, options);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  silent(): void {}
}

export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>, options: object): Logger {
  return new LazyChildLogger(parent, bindings, options) as unknown as Logger;
}
