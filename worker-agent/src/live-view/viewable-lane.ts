// What the live view needs from a lane: the page it shows now, and word when that changes
// (a job's fresh page, a session's page, or null while idle).
import type { Page } from 'puppeteer-core';

export interface ViewableLane {
  readonly index: number;
  currentPage(): Page | null;
  /** Calls `listener` on every change; returns the unsubscribe function. */
  onPageChange(listener: (page: Page | null) => void): () => void;
}
