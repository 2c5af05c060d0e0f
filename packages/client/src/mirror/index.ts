/** `@wsops/client/mirror`: the library behind `wsops-mirror`. */
export { type MirrorConfig, MirrorConfigError, parseConfig } from './config.js';
export { DEFAULT_DATABASE_URL, openStore, parseDatabaseUrl } from './open-store.js';
export { MIRROR_REGISTERS, type RegisterDescriptor, selectRegisters } from './registers.js';
export { type MirrorRecord, type MirrorStore, type MirrorTombstone, type RegisterState, STATE_TABLE, tableName } from './store.js';
export {
  DEFAULT_OVERLAP_MS,
  FULL_WALK_EVERY_MS,
  type FullReason,
  type RegisterSummary,
  type SyncOptions,
  type SyncSummary,
  syncOnce,
} from './sync.js';
