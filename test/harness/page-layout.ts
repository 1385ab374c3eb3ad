// Layout checks the console tests run inside the page: elements that stick out of their
// container, text cut off without a title to read it, and SVG marks outside a chart's plot.
import type { Page } from 'playwright-core';

export interface Overflow {
  el: string;
  parent: string;
  how: string;
}

/**
 * Every visible element of `root` must sit inside its parent box (1 px slack), and any element
 * that clips (overflow hidden/auto) must not hide content sideways unless it says what it hides
 * (an ellipsis with a title). Vertical scrolling is allowed: tables and panes scroll.
 */
export function findOverflows(page: Page, root = '#root'): Promise<Overflow[]> {
  return page.evaluate((rootSel) => {
    const out: Array<{ el: string; parent: string; how: string }> = [];
    const name = (e: Element) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : ''}${e.getAttribute('data-testid') ? `[${e.getAttribute('data-testid')}]` : ''}`;
    const rootEl = document.querySelector(rootSel);
    if (!rootEl) return [{ el: rootSel, parent: '', how: 'missing' }];
    if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push({ el: 'html', parent: 'window', how: `page scrolls sideways (${document.documentElement.scrollWidth} > ${window.innerWidth})` });
    for (const e of Array.from(rootEl.querySelectorAll('*'))) {
      // Inside an SVG, the chart's own geometry decides (checked apart).
      if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
      const style = getComputedStyle(e);
      if (style.display === 'none' || style.visibility === 'hidden') continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const p = e.parentElement;
      if (p) {
        const pr = p.getBoundingClientRect();
        const ps = getComputedStyle(p);
        const scrollsX = ps.overflowX === 'auto' || ps.overflowX === 'scroll';
        const scrollsY = ps.overflowY === 'auto' || ps.overflowY === 'scroll';
        // A zero-size wrapper (a chart library's sizing shell) positions, it does not contain.
        if (pr.width === 0 || pr.height === 0) continue;
        if (!scrollsX && (r.left < pr.left - 1 || r.right > pr.right + 1)) out.push({ el: name(e), parent: name(p), how: `x ${Math.round(r.left)}..${Math.round(r.right)} outside ${Math.round(pr.left)}..${Math.round(pr.right)}` });
        if (!scrollsY && ps.position !== 'static' && ps.overflowY !== 'visible' && (r.top < pr.top - 1 || r.bottom > pr.bottom + 1)) out.push({ el: name(e), parent: name(p), how: `y ${Math.round(r.top)}..${Math.round(r.bottom)} outside ${Math.round(pr.top)}..${Math.round(pr.bottom)}` });
      }
      const clipsX = style.overflowX !== 'visible';
      if (clipsX && e.scrollWidth > e.clientWidth + 1) {
        const saysWhat = style.textOverflow === 'ellipsis' && (e.getAttribute('title') || e.closest('[title]'));
        const scrolls = style.overflowX === 'auto' || style.overflowX === 'scroll';
        if (!saysWhat && !scrolls) out.push({ el: name(e), parent: '', how: `content cut off (${e.scrollWidth} > ${e.clientWidth})` });
        if (scrolls) out.push({ el: name(e), parent: '', how: `scrolls sideways (${e.scrollWidth} > ${e.clientWidth})` });
      }
    }
    return out;
  }, root);
}

export interface ChartGeometry {
  chart: string;
  plot: { left: number; right: number; top: number; bottom: number };
  bars: number;
  outside: string[];
  tickLabels: string[];
}

/** For each chart: its plot area (the axes' lines), its bars, and the x tick labels. */
export function chartGeometry(page: Page): Promise<ChartGeometry[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid^="chart-"]')).map((panel) => {
      const x = panel.querySelector('.recharts-xAxis .recharts-cartesian-axis-line')!.getBoundingClientRect();
      const ys = Array.from(panel.querySelectorAll('.recharts-yAxis .recharts-cartesian-axis-line')).map((l) => l.getBoundingClientRect());
      const plot = { left: Math.min(...ys.map((y) => y.right), x.left), right: x.right, top: Math.min(...ys.map((y) => y.top)), bottom: x.top };
      if (ys.length > 1) plot.right = Math.min(x.right, ...ys.filter((y) => y.left > x.left + x.width / 2).map((y) => y.left));
      const bars = Array.from(panel.querySelectorAll('.recharts-bar-rectangle .recharts-rectangle')).map((b) => b.getBoundingClientRect()).filter((b) => b.width > 0 && b.height > 0);
      const outside = bars
        .filter((b) => b.left < plot.left - 0.5 || b.right > plot.right + 0.5 || b.top < plot.top - 0.5 || b.bottom > plot.bottom + 0.5)
        .map((b) => `${Math.round(b.left)}..${Math.round(b.right)} × ${Math.round(b.top)}..${Math.round(b.bottom)}`);
      const tickLabels = Array.from(panel.querySelectorAll('.recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value')).map((t) => t.textContent ?? '');
      return { chart: panel.getAttribute('data-testid')!, plot, bars: bars.length, outside, tickLabels };
    }),
  );
}
