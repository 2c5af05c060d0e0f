/**
 * A system of record calling domain actions through the internal API at a steady rate (issue 39):
 * `asset.assign` and `asset.return` alternating on each asset of a pool, at most `inFlight`
 * requests open, each action sent at its scheduled time or, when all slots are busy, as soon as
 * one frees. Also single PUTs of people at a steady rate, the figure an action's CPU is compared with.
 */
import { Pool } from 'undici';

export interface ActionDrive {
  internal: string;
  token: string;
  workspaceId: string;
  /** AVAILABLE assets: each is assigned, then returned, then assigned again... */
  assets: readonly string[];
  /** ACTIVE people the assets are assigned to, asset k to person k mod their number. */
  personIds: readonly string[];
  rate: number;
  seconds: number;
  inFlight: number;
}

export interface DriveResult {
  /** Requests answered 200. */
  ok: number;
  /** Requests answered otherwise, or failed. */
  errors: number;
  firstError?: string;
  /** From the first request sent to the last answer. */
  seconds: number;
}

/** Whether each asset of a pool is assigned now, kept across drives of the same pool. */
const assignedByPool = new WeakMap<readonly string[], boolean[]>();

/** Sends `rate` requests/s for `seconds` on `connections` sockets; `request(i)` makes the i-th. */
async function steady(
  internal: string,
  rate: number,
  seconds: number,
  connections: number,
  request: (i: number) => { method: 'POST' | 'PUT'; path: string; body: string; answered?: (ok: boolean) => void },
  token: string,
): Promise<DriveResult> {
  const pool = new Pool(internal, { connections, pipelining: 1 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const total = Math.round(rate * seconds);
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  let open = 0;
  let freed: () => void = () => {};
  const t0 = performance.now();
  const pending = new Set<Promise<void>>();
  try {
    for (let i = 0; i < total; i++) {
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      while (open >= connections) await new Promise<void>((r) => (freed = r));
      const r = request(i);
      open++;
      const p: Promise<void> = pool
        .request({ method: r.method, path: r.path, headers, body: r.body })
        .then(async (res) => {
          const text = await res.body.text();
          const good = res.statusCode === 200 || res.statusCode === 201;
          if (good) ok++;
          else {
            errors++;
            firstError ??= `${res.statusCode} ${text.slice(0, 300)}`;
          }
          r.answered?.(good);
        })
        .catch((err: Error) => {
          errors++;
          firstError ??= err.message;
          r.answered?.(false);
        })
        .finally(() => {
          open--;
          pending.delete(p);
          freed();
        });
      pending.add(p);
    }
    await Promise.all([...pending]);
    return { ok, errors, firstError, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await pool.close();
  }
}

/**
 * Drives `asset.assign` / `asset.return` at `rate`/s. The pool must be larger than the requests in
 * flight, so an asset's previous action has been answered before its next is sent.
 */
export function driveActions(o: ActionDrive): Promise<DriveResult> {
  let assigned = assignedByPool.get(o.assets);
  if (!assigned) {
    assigned = o.assets.map(() => false);
    assignedByPool.set(o.assets, assigned);
  }
  const state = assigned;
  let next = 0;
  return steady(
    o.internal,
    o.rate,
    o.seconds,
    o.inFlight,
    () => {
      const k = next++ % o.assets.length;
      const asset = o.assets[k] as string;
      const assign = !state[k];
      const body = assign
        ? { workspace_id: o.workspaceId, asset, person: o.personIds[k % o.personIds.length] }
        : { workspace_id: o.workspaceId, asset };
      return {
        method: 'POST',
        path: `/internal/v1/actions/${assign ? 'asset.assign' : 'asset.return'}`,
        body: JSON.stringify(body),
        answered: (good) => {
          if (good) state[k] = assign;
        },
      };
    },
    o.token,
  );
}

/** People the PUTs take turns on. */
export const PUT_PEOPLE = 2000;

/** PUTs of PUT_PEOPLE people (of `locationId`) in turn: after the first round, each is an update. */
export function putPeople(
  internal: string,
  token: string,
  workspaceId: string,
  locationId: string,
  rate: number,
  seconds: number,
  inFlight: number,
): Promise<DriveResult> {
  const count = PUT_PEOPLE;
  return steady(
    internal,
    rate,
    seconds,
    inFlight,
    (i) => {
      const n = i % count;
      const record = {
        id: `per_put-${n}`,
        display_name: `Person put ${n}`,
        given_name: 'Person',
        family_name: `put${n}`,
        work_email: `p${n}@put.example.com`,
        work_phone: null,
        job_title: `Engineer ${i}`,
        team_id: null,
        location_id: locationId,
        manager_id: null,
        status: 'ACTIVE',
        start_date: '2024-01-01',
        end_date: null,
      };
      return { method: 'PUT', path: `/internal/v1/workspaces/${workspaceId}/people/${record.id}`, body: JSON.stringify(record) };
    },
    token,
  );
}
