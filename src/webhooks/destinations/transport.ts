/**
 * The seam between the dispatcher and the wire: one Transport per destination kind. The
 * dispatcher does everything else (claims, signing, retries, health, history) once for all
 * kinds; a transport only sends one signed message and says how it went, as an AttemptOutcome
 * (never throws). A third kind (SQS, Kafka) is one new file beside these and one line in index.ts.
 */
import type { AttemptOutcome } from './send.js';

/** Where one delivery goes: the endpoint, its checked addresses, and its kind's settings. */
export interface Target {
  endpointId: string;
  workspaceId: string;
  /** The stored URL (for a broker: no password). */
  url: URL;
  /** The addresses the URL check resolved and allowed: the connection goes to one of these. */
  addresses: readonly string[];
  /** The broker password (decrypted for this batch), null for kinds without one. */
  password: string | null;
  exchange: string | null;
  routingKey: string | null;
  subject: string | null;
}

/** One signed delivery: the webhook body and the headers every kind carries. */
export interface Message {
  eventId: string;
  eventType: string;
  deliveryId: string;
  /** Content type, X-Service-Event, -Delivery, -Signature, and the Standard Webhooks headers when on. */
  headers: Readonly<Record<string, string>>;
  body: string;
  /**
   * The broker's deduplication id (NATS `Nats-Msg-Id`): the event id, so a retry after a lost
   * acknowledgement is dropped by the stream; a resend the user asked for gets a new one (ADR 52).
   */
  dedupeId: string;
}

export interface Transport {
  /** One attempt, bounded by `deadline` (10 s from the start of the batch). */
  send(target: Target, message: Message, deadline: AbortSignal): Promise<AttemptOutcome>;
  /** Closes the endpoint's connections (it was disabled). */
  forget(endpointId: string): Promise<void>;
  close(): Promise<void>;
}

/** A failed outcome from a transport, before its latency is known. */
export function failed(
  errorClass: AttemptOutcome['errorClass'],
  error: string,
  statusCode: number | null = null,
): Omit<AttemptOutcome, 'latencyMs'> {
  return { ok: false, statusCode, errorClass, error: error.slice(0, 300), body: null };
}

export const SUCCEEDED: Omit<AttemptOutcome, 'latencyMs'> = { ok: true, statusCode: null, errorClass: null, error: null, body: null };

/** Rejects when the deadline passes: a broker attempt that hangs is a timeout, as an HTTP one is. */
export function beforeDeadline<T>(deadline: AbortSignal, work: Promise<T>): Promise<T> {
  if (deadline.aborted) return Promise.reject(timeoutError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(timeoutError());
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        deadline.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        deadline.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function timeoutError(): Error {
  const err = new Error('no broker acknowledgement within 10 s');
  err.name = 'TimeoutError';
  return err;
}
