/**
 * The import graph's rules, checked by `npm run lint` (ADR 26, ADR 44). Type-only imports count:
 * a circle of types is still a circle a reader has to follow. What each folder may import is
 * scripts/import-rules.cjs, one rule per folder here.
 */
const { FOUNDATION, MAY_IMPORT, UPWARD } = require('./scripts/import-rules.cjs');

const esc = (s) => s.replace(/[.]/g, '[.]');
const pathOf = (part) => (part.endsWith('/') ? `^src/${esc(part)}` : `^src/${esc(part)}$`);
const foundation = `^src/(${FOUNDATION.join('|')})[.]ts$`;
const featureRules = Object.entries(MAY_IMPORT).map(([part, allowed]) => {
  const upward = UPWARD.filter(([from]) => from === part).map(([, to]) => to);
  const ok = [part, ...allowed, ...upward].map(pathOf);
  return {
    name: `${part.replace(/[/.]/g, '-').replace(/-$/, '')}-imports`,
    severity: 'error',
    comment: `src/${part} may import only ${allowed.length ? allowed.join(', ') : 'the foundation'}${upward.length ? ` (and, upward on purpose, ${upward.join(', ')})` : ''} and the foundation files (docs/architecture.md).`,
    from: { path: pathOf(part) },
    to: { path: '^src/', pathNot: [foundation, ...ok] },
  };
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module must not import itself through others: cut the circle by passing the part only what it uses (Pick<...>) or by moving the shared piece down.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'apps-composed-from-above',
      severity: 'error',
      comment: 'The public and internal apps compose every part; only the CLI (serve), tests and benchmarks build them.',
      from: { path: '^src/', pathNot: '^src/(cli|http)/' },
      to: { path: '^src/http/(app|internal-app)[.]ts$' },
    },
    {
      name: 'foundation-imports-only-foundation',
      severity: 'error',
      comment: 'The files directly under src/ that every folder may import import nothing above them.',
      from: { path: foundation },
      to: { path: '^src/', pathNot: foundation },
    },
    {
      name: 'services-only-in-composition-roots',
      severity: 'error',
      comment:
        'Only the composition roots take the whole Services (services.ts, worker.ts, the two apps, the console plugin, the CLI context and serve): a feature declares the few services it uses (its own small interface).',
      from: {
        path: '^src/',
        pathNot: '^src/((services|worker)[.]ts|http/(app|internal-app)[.]ts|console/plugin[.]ts|cli/(context|serve-command)[.]ts)$',
      },
      to: { path: '^src/services[.]ts$' },
    },
    ...featureRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
