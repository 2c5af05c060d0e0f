/**
 * What each delivery error class means, in words an operator acts on: shown beside the class in
 * `wsops deliveries` and on the console's deliveries page. `url_refused` names the rules and the
 * setting that lifts them, since a newcomer testing on one machine meets it first.
 */
import type { ErrorClass } from './send.js';

export const ERROR_CLASS_HELP: Readonly<Record<ErrorClass, string>> = {
  http_status: 'the receiver answered with a status outside 2xx',
  redirect: 'the receiver answered with a redirect; redirects are failures and never followed',
  timeout: 'no answer within 10 s (connect and response)',
  tls: 'the TLS handshake or the certificate check failed',
  connection: 'the connection was refused or reset',
  url_refused:
    "nothing was sent: the server that delivers refused the endpoint URL under the webhook URL rules (https, port 443, a public address); the endpoint's last failure names the rule. For a receiver on this machine or a private network, start that server with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true (test and development only)",
  network: 'a network error before any answer',
  broker_refused:
    'the broker did not take the message: no such exchange, no queue bound for the routing key, no JetStream stream on the subject, or a nack',
  auth: 'the broker refused the credentials of the destination URL (or their access to the vhost); register it again with the right ones',
  secret_unavailable: 'the signing secret could not be decrypted (WSOPS_SECRET changed?); rotate the secret',
  internal_error: 'a fault inside wsops; see the server log',
};

export function errorClassHelp(errorClass: string | null): string | undefined {
  return errorClass !== null && Object.hasOwn(ERROR_CLASS_HELP, errorClass) ? ERROR_CLASS_HELP[errorClass as ErrorClass] : undefined;
}
