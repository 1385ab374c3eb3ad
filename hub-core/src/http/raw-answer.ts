// Answers written straight to a socket, where no response object can carry one: Node's parser
// refused the request, its body stalled past the body timeout, or a stopping hub answers a
// request it never finished reading. Each closes the connection and is cut once flushed.
import type { Socket } from 'node:net';
import type { Clock } from '../ports/clock.ts';

/** After its last answer, a socket gets this long to flush before it is destroyed. */
export const FLUSH_MS = 1000;

const REASONS = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 503: 'Service Unavailable' } as const;
export type RawStatus = keyof typeof REASONS;

/** The raw HTTP/1.1 text of a JSON answer that closes its connection. */
export function rawAnswer(status: RawStatus, body: unknown, headers: Record<string, string> = {}): string {
  const text = JSON.stringify(body);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${extra}Connection: close\r\n\r\n${text}`;
}

/** Ends the socket (after what it was given is written) and destroys it FLUSH_MS later at most, so a peer that reads nothing cannot hold it. */
export function cutSoon(socket: Socket, clock: Clock): void {
  socket.destroySoon();
  clock.setTimer(FLUSH_MS, () => socket.destroy());
}
