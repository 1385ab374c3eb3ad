// What changed inside this hub, for the console's /admin/events stream. Listeners debounce;
// emitters just say what moved.
import { EventEmitter } from 'node:events';
import type { JobRow } from '../ports/job-store.ts';

export class HubEvents extends EventEmitter {
  jobChanged(job: JobRow): void {
    this.emit('job', job);
  }
  workersChanged(): void {
    this.emit('workers');
  }
  hubsChanged(): void {
    this.emit('hubs');
  }
}
