/**
 * What each folder under src/ may import (ADR 44): read by .dependency-cruiser.cjs, which turns it
 * into one rule per folder, and by scripts/check-architecture.mjs, which holds it against the
 * table in docs/architecture.md.
 *
 * FOUNDATION: the files directly under src/ that every folder may import; they import only each
 * other. MAY_IMPORT: what each feature folder (and each composition root under src/) may import
 * besides the foundation and itself, in order from the bottom up. UPWARD: the imports that run
 * against that order on purpose, at most two.
 */
const FOUNDATION = [
  'clock',
  'config',
  'errors',
  'ids',
  'ip-ranges',
  'lists',
  'logger',
  'media-types',
  'redact-url',
  'secret-box',
  'text-rules',
  'vendor-files',
];

const MAY_IMPORT = {
  'registers/': [],
  'guards/': [],
  'store/': ['registers/'],
  'console-kit/': ['registers/', 'guards/', 'store/'],
  'cli-kit/': ['store/'],
  'audit/': ['store/'],
  'workspaces/': ['registers/', 'store/', 'cli-kit/', 'audit/'],
  'keys/': ['registers/', 'guards/', 'store/', 'console-kit/', 'cli-kit/', 'audit/', 'workspaces/'],
  'sign-in/': ['guards/', 'store/', 'console-kit/', 'cli-kit/', 'audit/', 'workspaces/', 'keys/'],
  'writes/': ['registers/', 'guards/', 'store/', 'audit/', 'workspaces/', 'keys/'],
  'read/': ['registers/', 'guards/', 'store/', 'keys/', 'writes/'],
  'webhooks/': ['registers/', 'guards/', 'store/', 'audit/', 'workspaces/', 'keys/'],
  'metrics.ts': ['store/', 'keys/', 'webhooks/'],
  'alerts/': ['store/', 'console-kit/', 'cli-kit/', 'audit/', 'workspaces/', 'sign-in/', 'webhooks/', 'metrics.ts'],
  'actions/': ['registers/', 'guards/', 'store/', 'audit/', 'workspaces/', 'keys/', 'writes/', 'read/', 'webhooks/'],
  'scim/': ['registers/', 'guards/', 'store/', 'console-kit/', 'cli-kit/', 'audit/', 'workspaces/', 'keys/', 'writes/', 'read/'],
  'audit-words.ts': ['audit/', 'workspaces/', 'keys/', 'sign-in/', 'writes/', 'webhooks/', 'alerts/', 'actions/', 'scim/'],
  'seed/': ['registers/', 'store/', 'workspaces/', 'writes/'],
  'services.ts': ['guards/', 'store/', 'keys/', 'writes/', 'read/', 'metrics.ts'],
  'worker.ts': ['read/', 'webhooks/', 'alerts/', 'services.ts'],
  'demo.ts': ['registers/', 'store/', 'workspaces/', 'keys/', 'sign-in/', 'writes/', 'seed/'],
  'console/': [
    'registers/',
    'guards/',
    'store/',
    'console-kit/',
    'audit/',
    'workspaces/',
    'keys/',
    'sign-in/',
    'writes/',
    'webhooks/',
    'alerts/',
    'scim/',
    'audit-words.ts',
    'services.ts',
  ],
  'developers/': ['registers/', 'store/', 'keys/', 'writes/', 'read/', 'webhooks/', 'actions/'],
  'http/': ['store/', 'writes/', 'read/', 'webhooks/', 'actions/', 'scim/', 'services.ts', 'console/', 'developers/'],
  'cluster-metrics.ts': ['metrics.ts'],
  'cli/': [
    'registers/',
    'store/',
    'cli-kit/',
    'audit/',
    'workspaces/',
    'keys/',
    'sign-in/',
    'writes/',
    'webhooks/',
    'alerts/',
    'actions/',
    'scim/',
    'audit-words.ts',
    'seed/',
    'services.ts',
    'worker.ts',
    'demo.ts',
    'developers/',
    'http/',
    'cluster-metrics.ts',
  ],
};

/** [from, to, why]: imports against the order above, kept on purpose. */
const UPWARD = [
  ['developers/', 'http/', "the developer documents are compressed once, at start, by the API's own compression (http/compression.ts)"],
];

module.exports = { FOUNDATION, MAY_IMPORT, UPWARD };
