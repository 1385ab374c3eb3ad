// One CDP client on one lane, worker side: a fresh browser (cdp-browser.ts) and an OUTBOUND
// WebSocket to the hub that the hub splices to the client (the worker never accepts a
// connection). Whichever ends first — the tunnel (client gone, hub gone), the browser
// (Browser.close, a crash), the hub's cdp_close or max_s — ends both, and `onEnd` runs once the
// browser is dead and its profile removed: the lane is clean when the hub hears of it.
import { WebSocket } from 'ws';
import { CDP_MAX_FRAME_BYTES } from 'paprika/wire';
import { CdpBrowser, type CdpBrowserOptions } from './cdp-browser.ts';
import { guardCdpCommand } from './cdp-guard.ts';
import { watchProfileDisk } from './profile-disk.ts';

/** How often a client's profile is measured against its disk cap. */
const DISK_CHECK_MS = 1000;

export interface CdpTunnelOptions {
  hubUrl: string;
  /** The worker link's `hop` (agent.ts): sent along so nginx routes the tunnel to the link's hub. */
  hop?: number;
  workerId: string;
  cdpId: string;
  tunnelToken: string;
  /** Headers of the worker's own credential (the worker token). */
  headers: Record<string, string>;
  maxS: number;
  /** PAPRIKA_CDP_MAX_DISK_MB in bytes: the client's profile past this ends it. */
  maxDiskBytes?: number;
  browser: CdpBrowserOptions;
  onEnd: (reason: string) => void;
}

/** The worker's own bound on a client, past the hub's max_s (a hub that died keeps no timer). */
const MAX_SLACK_MS = 5000;

export class CdpTunnel {
  private browser: CdpBrowser | undefined;
  private launching: Promise<CdpBrowser | undefined> | undefined;
  private ws: WebSocket | undefined;
  private ended = false;
  private maxTimer: NodeJS.Timeout | undefined;
  private stopDiskWatch: (() => void) | undefined;

  constructor(private readonly o: CdpTunnelOptions) {}

  async start(): Promise<void> {
    const o = this.o;
    this.maxTimer = setTimeout(() => this.close('max duration reached'), o.maxS * 1000 + MAX_SLACK_MS);
    this.launching = CdpBrowser.launch(o.browser, (text) => {
      if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(text);
    }).catch((err: unknown) => {
      this.close(`browser did not start: ${String(err)}`);
      return undefined;
    });
    const browser = await this.launching;
    if (!browser || this.ended) return; // close() ends it
    this.browser = browser;
    void browser.gone.then((why) => this.close(why));
    if (o.maxDiskBytes) {
      const capMb = Math.round(o.maxDiskBytes / 1024 / 1024);
      this.stopDiskWatch = watchProfileDisk(browser.userDataDir, o.maxDiskBytes, DISK_CHECK_MS, (bytes) =>
        this.close(`the client's browser profile passed ${capMb} MB on the worker's disk (${Math.round(bytes / 1024 / 1024)} MB; PAPRIKA_CDP_MAX_DISK_MB)`),
      );
    }
    const url = new URL(`/workers/${encodeURIComponent(o.workerId)}/cdp/${o.cdpId}`, o.hubUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    // The link's hop: behind nginx the tunnel reaches the hub that holds the link and asked for it.
    if (o.hop) url.searchParams.set('hop', String(o.hop));
    const ws = new WebSocket(url, { headers: { ...o.headers, 'x-paprika-tunnel-token': o.tunnelToken }, perMessageDeflate: false, maxPayload: CDP_MAX_FRAME_BYTES, handshakeTimeout: 10_000 });
    this.ws = ws;
    // Every command is checked before Chrome sees it (cdp-guard.ts); a refusal is answered here.
    ws.on('message', (data) => {
      if (!this.browser) return;
      const verdict = guardCdpCommand(data.toString(), this.browser.downloadDir);
      if ('pass' in verdict) this.browser.send(verdict.pass);
      else if (ws.readyState === WebSocket.OPEN) ws.send(verdict.refuse);
    });
    ws.on('close', () => this.close('tunnel closed'));
    ws.on('error', (err) => this.close(`tunnel failed: ${err.message}`));
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      this.close(`hub refused the tunnel (${res.statusCode})`);
    });
  }

  close(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.maxTimer);
    this.stopDiskWatch?.();
    this.ws?.terminate();
    void (async () => {
      const browser = this.browser ?? (await this.launching);
      await browser?.end();
      this.o.onEnd(reason);
    })();
  }
}
