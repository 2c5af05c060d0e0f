/**
 * SCIM writes of one workspace run one at a time in this process. Each write reads before it
 * writes (is this userName taken? what does the User hold now, for a PATCH?), and the write path
 * it uses opens its own transaction: without this, two POSTs of one userName (an identity
 * provider retrying after a timeout) could both pass the check and make two people, and two
 * PATCHes of one User could each drop the other's change. Several API processes (`serve
 * --processes N`) each have their own queue; docs/scim.md says so.
 */
const tails = new Map<string, Promise<unknown>>();

export function oneWriterPerWorkspace<T>(workspaceId: string, write: () => Promise<T>): Promise<T> {
  const before = tails.get(workspaceId) ?? Promise.resolve();
  const run = before.then(write, write);
  const tail = run.catch(() => undefined);
  tails.set(workspaceId, tail);
  // The last write of a workspace removes its entry, so idle workspaces hold no memory.
  void tail.then(() => {
    if (tails.get(workspaceId) === tail) tails.delete(workspaceId);
  });
  return run;
}
