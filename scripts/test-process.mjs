#!/usr/bin/env node
// One of the test runner's processes (run-tests.mjs): asks the runner for a test file, runs it,
// and asks for the next until none is left. Each file runs inside a suite named after it, so a
// file's top-level hooks (a browser launched in `before`) are that file's own, and a file that
// fails to load fails as that suite while the next file still runs.
import { resolve } from 'node:path';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';

const LINGER_MS = 30_000;

if (!process.send) {
  process.stderr.write('scripts/test-process.mjs is started by scripts/run-tests.mjs, which hands it the files to run\n');
  process.exit(2);
}

/** The runner's answer: the next file's path, or null when every file is taken. */
const nextFile = () =>
  new Promise((answer) => {
    process.once('message', answer);
    process.send('next');
  });

for (let file = await nextFile(); file; file = await nextFile()) {
  // Top-level suites run one after another; the file's suite ends (passed or failed) before the next is asked for.
  await new Promise((finished) =>
    describe(file, async () => {
      after(finished);
      await import(pathToFileURL(resolve(file)).href);
    }),
  );
}
process.disconnect();
// A process with nothing left to run ends by itself, unless a test left something open (a server,
// a socket, a timer). Then it says so and fails; the reporter's summary, written only at a natural
// end, is missing, and the failed tests above are marked as usual.
setTimeout(() => {
  process.stderr.write(
    `# this process did not end ${LINGER_MS / 1000} s after its last file: a test left a server, socket or timer open\n`,
  );
  process.exit(1);
}, LINGER_MS).unref();
