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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
