/**
 * The import graph's rules, checked by `npm run lint` (ADR 26). Type-only imports count: a
 * circle of types is still a circle a reader has to follow.
 */
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
      name: 'store-stays-below',
      severity: 'error',
      comment: 'The store and the register definitions are the bottom floor: they never reach up into HTTP, auth, reads, the console or the CLI.',
      from: { path: '^src/(store|registers)/' },
      to: { path: '^src/(http|auth|read|developers|console|cli|writes|actions|webhooks)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
