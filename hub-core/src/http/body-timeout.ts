// A request body slower than PAPRIKA_BODY_TIMEOUT_S is cut: a client sending one byte every few
// seconds would otherwise hold a socket (and a parser) for as long as it likes — even after an
// early 401 or 413, since the hub drains an unread body to keep the connection usable. Node's
// own requestTimeout is only checked every 30 s, so this timer is per request.
import type { FastifyInstance } from 'fastify';
import { PaprikaError } from '../wire/errors.ts';
import type { Clock } from '../ports/clock.ts';
import { cutSoon, rawAnswer } from './raw-answer.ts';

export function bodyTimeout(app: FastifyInstance, timeoutS: number, clock: Clock): void {
  app.addHook('onRequest', async (req, reply) => {
    const raw = req.raw;
    if (raw.complete) return;
    const cancel = clock.setTimer(timeoutS * 1000, () => {
      const socket = raw.socket;
      if (raw.complete || !socket || socket.destroyed) return;
      // The answer may already be out (an early 401 or 413): then only the connection is cut.
      if (!reply.raw.headersSent) socket.write(rawAnswer(408, new PaprikaError('request_timeout', { body_timeout_s: timeoutS }).toBody()));
      cutSoon(socket, clock);
    });
    raw.once('end', cancel);
    raw.once('close', cancel);
  });
}
