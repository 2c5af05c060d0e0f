export {
  expressWebhookHandler,
  fastifyWebhookPlugin,
  handleWebhook,
  type MinimalFastify,
  type MinimalRequest,
  type MinimalResponse,
  nodeWebhookHandler,
  type WebhookHandlerOptions,
  type WebhookResult,
} from './handlers.js';
export { IdempotencyGuard, type IdempotencyOptions, type IdempotencyStore, MemoryIdempotencyStore } from './idempotency.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  type RawBody,
  SIGNATURE_HEADER,
  type VerifyOptions,
  verifySignature,
  verifyWebhook,
  type WebhookEvent,
  WebhookSignatureError,
  type WebhookSignatureReason,
} from './verify.js';
