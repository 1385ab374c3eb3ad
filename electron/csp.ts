// The console's Content-Security-Policy, sent by the main process with every app:// file.
// Scripts only from the bundle; the one outside connection is the hub's live-feed socket.
import { hubSocketOrigin } from './navigation-policy.ts';

export function consoleCsp(hubUrl: string | null): string {
  const connect = ["'self'"];
  if (hubUrl) connect.push(hubSocketOrigin(hubUrl));
  return [
    "default-src 'none'",
    "script-src 'self'",
    // React and recharts set style attributes; no inline <script> is allowed regardless.
    "style-src 'self' 'unsafe-inline'",
    // Screenshots arrive as blobs fetched with the token (see the renderer's API client).
    "img-src 'self' blob: data:",
    "font-src 'self'",
    `connect-src ${connect.join(' ')}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
