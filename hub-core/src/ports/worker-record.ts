// What the console's worker drawer reads from the database: the worker's last jobs and the
// audit entries about it. Declared on JobStore (same database); named here for its readers.
import type { JobStore } from './job-store.ts';

export type WorkerRecord = JobStore['workerRecord'];
