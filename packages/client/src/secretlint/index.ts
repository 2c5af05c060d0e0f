/**
 * A secretlint rule for wsops API keys and SCIM tokens that checks each one's checksum, so a
 * scanner reports real ones only: `svc_sk_<live|test>_<key_id>_<secret>` (a key) or
 * `svc_scim_<live|test>_<token_id>_<secret>` (a SCIM token) whose last six characters are the CRC32
 * (as zlib computes it) of everything before them, in base62 with leading zeros. A mistyped or
 * corrupted key, or text made to look like one (documentation examples, test fixtures), is not
 * reported. Keys made before checksums existed are not recognised by it; the pattern-only rule
 * (docs/secretlint/.secretlintrc.json in the wsops repository) still finds those.
 *
 * In .secretlintrc.json: `{ "rules": [{ "id": "@wsops/client/secretlint" }] }`.
 * Typed without secretlint's packages, so installing the client does not pull them in.
 */

const KEY = /\bsvc_(?:sk|scim)_(?:live|test)_[0-9A-Za-z]{16}_[0-9A-Za-z]{43}\b/g;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHECKSUM_LENGTH = 6;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC32 of ASCII text (a key is ASCII by its pattern), the same number as zlib's crc32. */
function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = (CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function base62Checksum(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** Whether `text` is a wsops API key or SCIM token whose checksum holds. */
export function isWsopsKey(text: string): boolean {
  if (!new RegExp(`^${KEY.source}$`).test(text)) return false;
  return base62Checksum(text.slice(0, -CHECKSUM_LENGTH)) === text.slice(-CHECKSUM_LENGTH);
}

export const messages = {
  WSOPS_API_KEY: {
    en: (props: { CREDENTIAL: string }) =>
      `found a wsops ${props.CREDENTIAL.startsWith('svc_scim_') ? 'SCIM token' : 'API key'} (its checksum holds): ${props.CREDENTIAL}`,
  },
};

/** The parts of secretlint's rule context this rule uses. */
export interface SecretlintContext {
  createTranslator(catalogue: typeof messages): (id: 'WSOPS_API_KEY', props: { CREDENTIAL: string }) => unknown;
  report(descriptor: { message: unknown; range: readonly [number, number] }): void;
}

export const creator = {
  messages,
  meta: {
    id: '@wsops/client/secretlint',
    recommended: true,
    type: 'scanner',
    supportedContentTypes: ['text'],
  },
  create(context: SecretlintContext) {
    const t = context.createTranslator(messages);
    return {
      file(source: { content: string }) {
        for (const match of source.content.matchAll(KEY)) {
          const key = match[0];
          if (!isWsopsKey(key)) continue;
          const start = match.index ?? 0;
          context.report({ message: t('WSOPS_API_KEY', { CREDENTIAL: key }), range: [start, start + key.length] });
        }
      },
    };
  },
};
