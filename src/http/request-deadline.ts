/** A request's deadline: its signal aborts when the caller's does, or when `ms` have passed. */
export interface Deadline {
  signal: AbortSignal;
  /** The time ran out (not the caller's abort). */
  expired(): boolean;
  /** Stops the timer and lets go of the caller's signal; call it once the request settled. */
  clear(): void;
}

/**
 * A real timer, not the injected clock: undici needs a real abort to stop reading. It keeps the
 * process alive until clear(): a request waiting for room in the byte budget waits on nothing else
 * the event loop can see, and its deadline is what ends a wait that would never end (an unref'ed
 * timer let such a process exit at once, silently). The caller's signal is followed by a listener
 * removed on clear(), so that a long-lived signal (the run's SIGINT) does not collect one per request.
 */
export function startDeadline(ms: number, outer: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new Error(`no complete answer within ${ms} ms`));
  }, ms);
  const follow = () => controller.abort(outer?.reason);
  if (outer?.aborted === true) follow();
  else outer?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    expired: () => expired,
    clear: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', follow);
    },
  };
}
