/**
 * `npm start` and `npx wsops serve` run the server under a shell that npm starts. A signal to npm
 * (SIGTERM from a supervisor, or Ctrl-C where only npm gets it) reaches that shell, which dies
 * without passing it on, and the server would go on holding its port with nobody to stop it.
 * Started by npm, the server stops when the process that started it is gone (it was handed to
 * another parent). Started any other way (systemd, nohup, a container), it does not watch:
 * outliving a login shell is what those want.
 */

/** How often the parent is checked: the port is free again within about this long. */
const CHECK_MS = 250;

/** Calls `stop` once the launcher is gone, when the process was started by npm; returns a function that stops watching. */
export function stopWithLauncher(stop: () => void, env: NodeJS.ProcessEnv = process.env): () => void {
  if (env.npm_command === undefined && env.npm_lifecycle_event === undefined) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
