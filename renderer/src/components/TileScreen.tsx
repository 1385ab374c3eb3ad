// A wall tile's screen: the lane's latest thumbnail, relayed by the hub about once a second.
// The frame is written into the <img> directly (no React state): 200 tiles at 1 frame/s must
// not re-render the wall 200 times a second. Until a frame arrives, or while the lane is idle,
// the placeholder shows.
import { useContext, useEffect, useRef } from 'react';
import { thumbSrc, type WallThumb } from '../model/wall-watch.ts';
import { WallThumbsContext } from './wall-thumbs-context.ts';

function show(img: HTMLImageElement, t: WallThumb): void {
  if (t.jpeg) {
    img.src = thumbSrc(t.jpeg);
    img.dataset.thumbAt = String(t.at);
    if (img.hidden) img.hidden = false;
  } else if (!img.hidden) {
    img.hidden = true;
    img.removeAttribute('src');
    delete img.dataset.thumbAt;
  }
}

export function TileScreen({ workerId, lane, watch, busy }: { workerId: string; lane: number; watch: boolean; busy: boolean }) {
  const thumbs = useContext(WallThumbsContext);
  const img = useRef<HTMLImageElement>(null);
  useEffect(() => {
    const el = img.current;
    if (!thumbs || !watch || !el) return;
    const unsubscribe = thumbs.subscribe(workerId, lane, (t) => show(el, t));
    return () => {
      unsubscribe();
      el.hidden = true;
      el.removeAttribute('src');
      delete el.dataset.thumbAt;
    };
  }, [thumbs, workerId, lane, watch]);
  return (
    <span className="tile-screen">
      <img ref={img} data-testid="lane-thumb" alt="" decoding="async" hidden />
      <span className="tile-mark">{busy ? '▶' : ''}</span>
    </span>
  );
}
