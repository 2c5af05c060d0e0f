/**
 * The one logger: pino, JSON lines when stdout is piped (for log collectors), a readable
 * coloured line per event on a terminal. Passed down explicitly (Services.logger); nothing
 * else in the code writes to stderr/stdout for logging.
 */
import { type Logger as PinoLogger, pino } from 'pino';
import pretty from 'pino-pretty';

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
  return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', sync: true }));
}

/** A logger that writes nothing: the default for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
