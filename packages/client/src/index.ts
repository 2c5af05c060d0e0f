/** `@wsops/client`: the API client, typed errors and webhook verification. The mirror is `@wsops/client/mirror`. */
export { type ClientOptions, type Resources, type Scopes, WsopsClient } from './client.js';
export {
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  type Problem,
  RateLimitError,
  ServerError,
  TimeoutError,
  WsopsApiError,
  WsopsError,
} from './errors.js';
export type { Event, EventsParams, EventsResource, EventType } from './events.js';
export type { components, operations, paths, webhooks } from './generated/openapi.js';
export { REGISTERS, type RegisterPath, type RegisterProperty, type RegisterTypes } from './generated/registers.js';
export type { DeletionsParams, Page, PageParams, RegisterResource, Tombstone } from './resource.js';
export type { FetchLike, RequestOptions } from './transport.js';
export * from './webhooks/index.js';
