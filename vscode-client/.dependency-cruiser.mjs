// dependency-cruiser: no import circles in the extension (src/) or the
// webview (webview/), counting `import type` edges (tsPreCompilationDeps),
// which the TypeScript compiler erases but which still tie two modules
// together. `npm run lint` runs it (lint:cycles); test/unit/cycles.test.ts
// shows that a circle of type-only imports fails it.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle (type-only imports count). Hand a module the narrow interface it needs, ' +
        'defined in the leaf module or a small types module, not the class that uses it.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
