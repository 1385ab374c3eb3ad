// Follows one lane's page and streams its screen as JPEG frames (CDP Page.startScreencast).
// The lane switches pages per job; the stream re-attaches to each and reports idle in between.
// Two uses, two sizes: the full-rate live view of one lane, and the wall's small thumbnails.
import type { CDPSession, Frame, Page, Protocol } from 'puppeteer-core';
import type { ViewableLane } from './viewable-lane.ts';

export interface FrameSink {
  frame(jpeg: Buffer): void;
  idle(): void;
  /** true while the viewer is behind: a frame then is dropped rather than queued. */
  congested(): boolean;
}

/** The live view of one lane: every frame, large. */
export const LIVE_SCREENCAST: Protocol.Page.StartScreencastRequest = { format: 'jpeg', quality: 60, maxWidth: 1280, maxHeight: 800, everyNthFrame: 1 };
/**
 * A wall tile: small and cheap to encode; the thumbnailer keeps about one frame a second.
 * Chrome sends a frame only when the page paints (a still page costs nothing), and counts
 * `everyNthFrame` in paints: skipping any could leave a tile on an old screen after the page's
 * last paint, so every paint is taken and the thumbnailer keeps the latest.
 */
export const THUMB_SCREENCAST: Protocol.Page.StartScreencastRequest = { format: 'jpeg', quality: 40, maxWidth: 320, maxHeight: 200, everyNthFrame: 1 };

/** Starts following the lane; returns the function that stops it. */
export function followLaneScreen(lane: ViewableLane, sink: FrameSink, params: Protocol.Page.StartScreencastRequest = LIVE_SCREENCAST): () => void {
  let session: CDPSession | undefined;
  let offNavigation: (() => void) | undefined;
  let generation = 0; // a page that changes while a screencast is starting must not leak its session
  let stopped = false;

  const detach = () => {
    const s = session;
    session = undefined;
    offNavigation?.();
    offNavigation = undefined;
    if (s) void s.send('Page.stopScreencast').catch(() => {}).finally(() => void s.detach().catch(() => {}));
  };

  const attach = async (page: Page, mine: number) => {
    let s: CDPSession;
    try {
      s = await page.createCDPSession();
    } catch {
      return; // the page closed before we reached it: the next change brings the next page
    }
    if (mine !== generation || stopped) return void s.detach().catch(() => {});
    session = s;
    s.on('Page.screencastFrame', (event: Protocol.Page.ScreencastFrameEvent) => {
      // Chrome sends the next frame only after this ack; acking a dropped frame keeps the stream live.
      void s.send('Page.screencastFrameAck', { sessionId: event.sessionId }).catch(() => {});
      // A frame still in flight from a page the lane has left (its session is being detached)
      // must not follow the idle or the next page's frames: the tile would show the old screen.
      if (session !== s || stopped) return;
      if (!sink.congested()) sink.frame(Buffer.from(event.data, 'base64'));
    });
    // A navigation that swaps the renderer (about:blank → the job's site) ends a screencast
    // started before it: start it again on every main-frame navigation.
    const start = () => void s.send('Page.startScreencast', params).catch(() => {});
    const onNavigated = (frame: Frame) => {
      if (frame === page.mainFrame() && session === s) start();
    };
    page.on('framenavigated', onNavigated);
    offNavigation = () => page.off('framenavigated', onNavigated);
    await s.send('Page.bringToFront').catch(() => {});
    start();
  };

  const show = (page: Page | null) => {
    generation++;
    detach();
    if (stopped) return;
    if (page) void attach(page, generation);
    else sink.idle();
  };

  const unsubscribe = lane.onPageChange(show);
  show(lane.currentPage());
  return () => {
    stopped = true;
    unsubscribe();
    generation++;
    detach();
  };
}
