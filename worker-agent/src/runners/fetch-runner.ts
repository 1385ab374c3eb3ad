// `fetch` {url, wait_until?, screenshot?}: load one URL and report what came back.
import type { FetchSpec } from 'paprika/wire';
import { gotoPage, msUntil, pngAsset, type PageWork, type RunnerOutput } from './page-job.ts';

export interface FetchResult {
  status_code: number | null;
  final_url: string;
  title: string;
  html_bytes: number;
}

export async function runFetch(work: PageWork, spec: FetchSpec): Promise<RunnerOutput> {
  const { page, deadline } = work;
  // null response: same-document navigation (a #hash) or a page that never answered with HTTP.
  const response = await gotoPage(work, spec.url, { waitUntil: spec.wait_until ?? 'load', timeout: msUntil(deadline) });
  const html = await page.content();
  const result: FetchResult = {
    status_code: response ? response.status() : null,
    final_url: page.url(),
    title: await page.title(),
    html_bytes: Buffer.byteLength(html, 'utf8'),
  };
  const assets = spec.screenshot ? [pngAsset('screenshot.png', await page.screenshot({ type: 'png' }))] : [];
  return { result, assets };
}
