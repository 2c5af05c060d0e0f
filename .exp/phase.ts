import { people } from '../src/registers/catalogue.js';
import { parseOperation } from '../src/writes/import.js';
import { changeOf } from '../src/writes/record-changes.js';
const n = 100000;
const texts: string[] = [];
for (let i = 0; i < n; i++) texts.push(JSON.stringify({ register: 'people', op: 'upsert', record: { id: `per_${i}`, display_name: `Person ${i}`, given_name: 'P', family_name: `N${i}`, work_email: `p${i}@example.com`, work_phone: null, job_title: 'Engineer', team_id: null, location_id: 'loc_hq', manager_id: i > 0 ? `per_${Math.floor(i / 10)}` : null, status: 'ACTIVE', start_date: '2024-01-01', end_date: null } }));
for (let round = 0; round < 3; round++) {
let t = performance.now();
const ops: any[] = texts.map((x, i) => parseOperation(i + 1, x, false));
const parse = performance.now() - t;
t = performance.now();
const rows = ops.map((o) => changeOf('wsp_x', people, o.record, undefined, Date.now()).row);
const change = performance.now() - t;
console.log('parse µs/rec', (parse * 1000 / n).toFixed(2), 'changeOf µs/rec', (change * 1000 / n).toFixed(2), rows.length);
}
