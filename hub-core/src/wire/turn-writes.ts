// Frames written to one socket within one event-loop turn leave in one write. A job costs a
// link four frames (assign, job_started, job_result, result_ack) and ws writes each at once:
// a system call per frame, and on loopback the peer woken for each. Corked until the turn's
// end (setImmediate), the frames of every job that moved in that turn go out together; a lone
// frame waits only for the end of the turn it was sent in.

/** The part of a socket (net.Socket, or any Writable) this needs. */
export interface Corkable {
  cork(): void;
  uncork(): void;
  readonly destroyed?: boolean;
}

export interface TurnWrites {
  /** Call before each send: the first call in a turn corks the stream until the turn ends. */
  hold(): void;
  /** Writes what is held now (before a process exits within the turn, say). */
  flush(): void;
}

export function corkPerTurn(stream: Corkable): TurnWrites {
  let corked = false;
  const flush = () => {
    if (!corked) return;
    corked = false;
    stream.uncork();
  };
  return {
    hold() {
      if (corked || stream.destroyed) return;
      corked = true;
      stream.cork();
      setImmediate(flush);
    },
    flush,
  };
}

/** For a link whose socket is not known (yet): sends go out as they are made. */
export const UNCORKED: TurnWrites = { hold() {}, flush() {} };
