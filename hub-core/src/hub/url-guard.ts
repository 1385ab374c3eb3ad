// The hub's half of the egress policy: the rules it sends workers in `welcome` (the operator's
// lists plus its own listening address), and the submit-time check of the URLs a request names
// explicitly. Workers enforce the policy on every request their browsers make; this check only
// refuses early, before anything is stored, what would certainly be refused there.
import type { Config } from '../config.ts';
import type { JobRequest, MacroStep, SessionCommand } from '../wire/job-spec.ts';
import type { UrlPolicyLists } from '../wire/protocol.ts';
import { checkUrl, hostAddresses, ownAddressRules, parsePolicy, type UrlPolicy } from '../wire/url-policy.ts';
import { PaprikaError } from '../wire/errors.ts';

export class UrlGuard {
  private cached: { port: number; lists: UrlPolicyLists; policy: UrlPolicy } | undefined;

  /** `port()`: the port the hub really listens on (PAPRIKA_PORT=0 picks one at start). */
  constructor(
    private readonly config: Config,
    private readonly port: () => number,
  ) {}

  private current() {
    const port = this.port();
    if (this.cached?.port === port) return this.cached;
    const hub = new URL(this.config.hubUrl);
    const hubPort = hub.port === '' ? (hub.protocol === 'https:' ? 443 : 80) : Number(hub.port);
    const own = ownAddressRules(this.config.bind, port, hostAddresses());
    // PAPRIKA_HUB_URL as peers reach it (port 0 in tests until the real one is known).
    if (hubPort > 0) own.push(`${hub.hostname}:${hubPort}`);
    const lists: UrlPolicyLists = { deny: [...new Set([...this.config.urlDeny, ...own])], allow: this.config.urlAllow ? [...this.config.urlAllow] : null };
    this.cached = { port, lists, policy: parsePolicy(lists) };
    return this.cached;
  }

  /** What `welcome` carries; the built-in deny list is implied (every parser adds it). */
  lists(): UrlPolicyLists {
    return this.current().lists;
  }

  /** 400 url_denied for a fetch url or macro goto the policy refuses; nothing is stored. */
  assertJob(req: JobRequest): void {
    if (req.kind === 'fetch') this.assertUrl(req.spec.url, 'spec.url');
    if (req.kind === 'macro') req.spec.steps.forEach((step, i) => this.assertStep(step, `spec.steps.${i}.url`));
  }

  assertCommand(command: SessionCommand): void {
    if (command.op !== 'ping') this.assertStep(command, 'url');
  }

  private assertStep(step: MacroStep, field: string): void {
    if (step.op === 'goto') this.assertUrl(step.url, field);
  }

  private assertUrl(url: string, field: string): void {
    // No DNS here: names are judged by the name rules; the worker resolves and checks addresses.
    const verdict = checkUrl(this.current().policy, url);
    if (!verdict.allowed) throw new PaprikaError('url_denied', { field, rule: verdict.rule }, `url denied: ${url} (${verdict.rule})`);
  }
}
