// A page thread starts here: a worker thread does not inherit bin/wsops' TypeScript loader, so
// it registers its own before loading the thread's module.
import { register } from 'tsx/esm/api';

register();
await import('./page-thread.ts');
