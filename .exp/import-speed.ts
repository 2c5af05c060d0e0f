import { loadConfig } from '../src/config.js';
import { createServices } from '../src/services.js';
import { createWorkspace, parseModules } from '../src/store/workspaces.js';
import { importRecords } from '../src/writes/import.js';
import { exportRecords, exportRegisters } from '../src/writes/export.js';

const url = process.argv[2] ?? 'sqlite:/tmp/imp-speed/x.db';
const n = Number(process.argv[3] ?? 200000);
const config = loadConfig({ WSOPS_DATABASE_URL: url, WSOPS_SECRET: 'x'.repeat(40) });
const s = await createServices(config);
const ws = await createWorkspace(s.database.db, 'speed', parseModules('all'), new Date().toISOString());
function* lines() {
  yield JSON.stringify({ register: 'locations', op: 'upsert', record: { id: 'loc_hq', name: 'HQ', kind: 'SITE', parent_id: null, timezone: 'Europe/Berlin', address: null } }) + '\n';
  let buf = '';
  for (let i = 0; i < n; i++) {
    buf += JSON.stringify({ register: 'people', op: 'upsert', record: { id: `per_${i}`, display_name: `Person ${i}`, given_name: 'P', family_name: `N${i}`, work_email: `p${i}@example.com`, work_phone: null, job_title: 'Engineer', team_id: null, location_id: 'loc_hq', manager_id: i > 0 ? `per_${Math.floor(i / 10)}` : null, status: 'ACTIVE', start_date: '2024-01-01', end_date: null } }) + '\n';
    if (buf.length > 65536) { yield buf; buf = ''; }
  }
  if (buf) yield buf;
}
async function* src() { for (const l of lines()) yield Buffer.from(l); }
const t0 = performance.now();
const r = await importRecords(s, ws.id, src(), { actor: 'bench' });
const t1 = performance.now();
console.log('import', r.lines, 'lines', Math.round(r.lines / ((t1 - t0) / 1000)), 'rec/s', 'refused', r.refused_count, 'rss MB', Math.round(process.memoryUsage().rss / 1e6));
const t2 = performance.now();
const r2 = await importRecords(s, ws.id, src(), { actor: 'bench' });
console.log('re-import', Math.round(r2.lines / ((performance.now() - t2) / 1000)), 'rec/s', JSON.stringify(r2.counts.people));
const t3 = performance.now();
let bytes = 0, count = 0;
for await (const chunk of exportRecords(s, ws.id, exportRegisters())) { bytes += chunk.length; count += chunk.split('\n').length - 1; }
console.log('export', count, Math.round(count / ((performance.now() - t3) / 1000)), 'rec/s');
await s.close();
