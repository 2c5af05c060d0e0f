import { locations } from '../../registers/catalogue.js';
import type { SeedContext } from '../context.js';
import { DEPARTMENTS, SITES } from '../places.js';
import type { SeedCounts } from '../plan.js';
import { iso, recordStamps } from '../time.js';

/**
 * Sites, with departments under each site and teams under each department. Every site gets a
 * different slice of the departments, so a scale-1 picture has IT, Finance and Facilities
 * somewhere.
 */
export async function seedLocations(ctx: SeedContext, counts: SeedCounts): Promise<void> {
  const rng = ctx.stream('locations');
  let index = 0;
  const write = (name: string, kind: string, parentId: string | null, timezone: string, address: string | null) => {
    const id = ctx.keys.id('loc', index++);
    const { created, updated } = recordStamps(rng, ctx.now);
    ctx.writer.add(locations, {
      id,
      name,
      kind,
      parent_id: parentId,
      timezone,
      address,
      created_at: iso(created),
      updated_at: iso(updated),
    });
    return id;
  };
  for (let s = 0; s < counts.sites; s++) {
    const template = SITES[s % SITES.length] as (typeof SITES)[number];
    const campus = Math.floor(s / SITES.length);
    const city = campus === 0 ? template.city : `${template.city} Campus ${campus + 1}`;
    const address = campus === 0 ? template.address : `Building ${campus + 1}, ${template.address}`;
    const siteId = write(city, 'SITE', null, template.timezone, address);
    ctx.dir.addSite({ id: siteId, city, timezone: template.timezone, currency: template.currency, phonePrefix: template.phonePrefix });
    for (let d = 0; d < counts.departmentsPerSite; d++) {
      const department = DEPARTMENTS[(s * counts.departmentsPerSite + d) % DEPARTMENTS.length] as (typeof DEPARTMENTS)[number];
      const departmentId = write(`${department.name} (${city})`, 'DEPARTMENT', siteId, template.timezone, null);
      ctx.dir.departments.push({ id: departmentId, name: department.name, siteId });
      for (let t = 0; t < counts.teamsPerDepartment; t++) {
        const base = department.teams[t % department.teams.length] as string;
        const round = Math.floor(t / department.teams.length);
        const name = `${base}${round === 0 ? '' : ` ${round + 1}`} (${city})`;
        const teamId = write(name, 'TEAM', departmentId, template.timezone, null);
        ctx.dir.addTeam({ id: teamId, name, siteId, departmentId, department: department.name });
      }
    }
    await ctx.writer.flushIfFull();
  }
}
