// What a lane may be asked to run: a job kind (a rerun runs its source's kind), a session, a
// CDP client. A worker's hello lists the ones its lanes run (`kinds`); the hub places nothing
// else there (a fetch job on a simulated lane failed "simulated lanes run sleep jobs only").
export const WORK_KINDS = ['fetch', 'macro', 'sleep', 'session', 'cdp'] as const;
export type WorkKind = (typeof WORK_KINDS)[number];
