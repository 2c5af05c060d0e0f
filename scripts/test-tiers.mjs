// The suite's two tiers (run-tests.mjs). A test file must finish within FILE_LIMIT_MS; the ones
// that cannot (a real 10 s attempt timeout, a browser, thousands of deliveries, several server
// processes) are named here, each with why, and get SLOW_FILE_LIMIT_MS. `npm test` runs both
// tiers; `node scripts/run-tests.mjs --fast` runs the files outside this list only.

/** Long enough for any file outside the slow tier on a busy 2-core machine, short enough that a hung file is found within the run. */
export const FILE_LIMIT_MS = 90_000;
/** The slow tier's limit: a hang there still fails the run. */
export const SLOW_FILE_LIMIT_MS = 6 * 60_000;

/** The slow tier: path → why it is slow. */
export const SLOW_FILES = new Map([
  ['test/console/sso.test.ts', 'an OpenID provider and the console, a sign-in per case'],
  ['test/webhooks/local-webhooks.test.ts', 'wsops listen and serve as processes, real verification round trips'],
  ['test/console/e2e.test.ts', 'drives Chromium'],
  ['test/ops/copy.test.ts', 'copies whole deployments between both databases, through the CLI'],
  ['test/writes/import-cli.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/ops/cli-says-what-it-works-on.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/ops/invariants-across-processes.test.ts', 'several server or worker processes at once, racing each other'],
  ['test/ops/single-use-across-processes.test.ts', 'several server or worker processes at once, racing each other'],
  ['test/console/sign-in.test.ts', 'every sign-in path, with password hashing at its real cost'],
  ['test/ops/serve-start-and-stop.test.ts', 'starts and stops wsops serve as a process, case after case'],
  ['test/ops/serve-cluster.test.ts', 'several server or worker processes at once, racing each other'],
  ['test/api/key-cache.test.ts', 'several API processes and the key cache invalidation between them'],
  ['test/cli.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/webhooks/delivery-cli.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/console/second-factor.test.ts', 'every second-factor path, with password hashing at its real cost'],
  ['packages/client/test/mirror.test.ts', 'mirrors against a real server, both databases'],
  ['test/console/passkeys.test.ts', 'WebAuthn ceremonies against the console'],
  ['test/console/admin-cli.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/key-cli.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/writes/reference-races.test.ts', '150 racing pairs per write path, two processes'],
  ['test/webhooks/cli.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/webhooks/destinations-rabbitmq.test.ts', 'a real RabbitMQ, stopped and started again'],
  ['test/writes/real-server.test.ts', 'wsops serve as a process'],
  ['test/actions/operator-surfaces.test.ts', 'runs bin/wsops as a process, once per command it tests'],
  ['test/writes/import.test.ts', 'imports of thousands of lines, both databases'],
  ['test/console/sign-in-throttle.test.ts', 'hundreds of failed sign-ins, each hashed at its real cost'],
  ['packages/client/test/mirror-live.test.ts', 'a live mirror against a real server'],
  ['test/webhooks/fairness.test.ts', 'thousands of deliveries and two worker processes'],
  ['test/console/keys-browser.test.ts', 'drives Chromium'],
  ['test/install/packages.test.ts', 'packs both packages and installs them offline on Node.js 22, 24 and 26'],
]);
