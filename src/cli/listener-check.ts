/**
 * Whether the ports `wsops serve` will listen on can be bound, asked before anything is written
 * or printed (the demo's key and link would point at a server that never starts), and the one
 * line that says why one cannot and which setting changes it.
 */
import { createServer } from 'node:net';
import { UsageError } from '../cli-kit/output.js';

export interface PlannedListener {
  port: number;
  host: string;
  /** What sets the port, named in the refusal: `WSOPS_PORT`, `--port`, `WSOPS_INTERNAL_PORT`. */
  setting: string;
  /** What sets the host, for an address this machine does not have. */
  hostSetting: string;
}

/** The refusal for a listen error of `listener`, or undefined for an error that is not about the address. */
export function listenRefusal(err: unknown, listener: PlannedListener): UsageError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = `port ${listener.port} on ${listener.host}`;
  if (code === 'EADDRINUSE') {
    return new UsageError(
      `${where} is already in use (another wsops serve?): stop what holds it, or choose a free port with ${listener.setting}`,
    );
  }
  if (code === 'EACCES') {
    return new UsageError(
      `${where} needs privileges this user lacks (ports below 1024): choose a port from 1024 up with ${listener.setting}`,
    );
  }
  if (code === 'EADDRNOTAVAIL') {
    return new UsageError(
      `${listener.host} is not an address of this machine: set ${listener.hostSetting} to one of its addresses (or 0.0.0.0)`,
    );
  }
  return undefined;
}

/** Binds each listener's port once and lets it go; throws the refusal of the first that cannot be bound. */
export async function checkListeners(listeners: readonly PlannedListener[]): Promise<void> {
  for (const listener of listeners) {
    // Port 0 asks the system for any free port: nothing to check.
    if (listener.port === 0) continue;
    const probe = createServer();
    const error = await new Promise<Error | undefined>((resolve) => {
      probe.once('error', resolve);
      probe.listen({ port: listener.port, host: listener.host, exclusive: true }, () => resolve(undefined));
    });
    if (error) throw listenRefusal(error, listener) ?? error;
    await new Promise((resolve) => probe.close(resolve));
  }
}
