package io.diffuser.fuser;

import io.diffuser.Effect;

/**
 * Something that produces events and can be listened to: a button's clicks, a text
 * field's edits, a timer. Turn it into a {@link Fuser} with {@link Fuser#from(Source)}.
 *
 * <p>A source may be connected several times; each connection is independent. Events
 * may be sent to the effect from any thread, including threads the JVM did not start
 * (the binding attaches them while an event is delivered).
 *
 * <p>The library calls {@code connect} on the thread that connects the fuser
 * ({@link Fuser#connect}, a loop's {@code connect} or {@code start}), and the returned
 * disposable's {@code dispose()} at most once, on the thread that disposes the connection
 * (or stops or disposes the loop), or on the connecting thread when a later source of the
 * same connection failed to connect. That thread may be inside this source's own
 * emission: an effect that disposes its connection disconnects the sources right after it
 * returns, and a loop the source feeds runs its work (connecting and disconnecting
 * sources) on the emitting thread. So emit outside any lock that {@code connect} or
 * {@code dispose()} takes: a reentrant lock would let them change the source's listeners
 * in the middle of its emission, and two sources written so can deadlock on each other.
 *
 * @param <A> the type of events
 */
@FunctionalInterface
public interface Source<A> {
  /**
   * Starts sending events to {@code effect} until the returned disposable is disposed.
   *
   * <p>{@code effect.run(event)} delivers an event; it throws what a downstream effect or
   * function threw for that event (or, when the connected effect disposed its connection,
   * what a source's {@code dispose()} threw as the sources were disconnected right after
   * it). After the connection was disposed, events sent to {@code effect} are dropped.
   *
   * @param effect where to send the events
   * @return what stops this connection; must not be {@code null}
   */
  Disposable connect(Effect<A> effect);
}
