#!/usr/bin/env node
// One of the test runner's processes (run-tests.mjs): asks the runner for a test file, runs it,
// and asks for the next until none is left. Each file runs inside a suite named after it, so a
// file's top-level hooks (a browser launched in `before`) are that file's own, and a file that
// fails to load fails as that suite while the next file still runs.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';

const LINGER_MS = 30_000;

if (!process.send) {
  process.stderr.write('scripts/test-process.mjs is started by scripts/run-tests.mjs, which hands it the files to run\n');
  process.exit(2);
}

/**
 * CPU seconds used so far by this process and by its children that have ended (fields 14-17 of
 * /proc/self/stat, in clock ticks of 1/100 s on Linux): the runner lists each file's share.
 * Elsewhere, this process's own only.
 */
function cpuSeconds() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
}

/** The runner's answer: the next file's path, or null when every file is taken. */
const nextFile = () =>
  new Promise((answer) => {
    process.once('message', answer);
    process.send({ cpuSeconds: cpuSeconds() });
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
