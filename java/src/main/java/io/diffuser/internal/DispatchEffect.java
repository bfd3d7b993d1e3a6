package io.diffuser.internal;

import io.diffuser.Effect;

/**
 * The effect a {@link io.diffuser.fuser.Source} receives in {@code connect}: it wraps the
 * core's dispatch handle of that source connection, and {@link #run(Object)} emits the
 * event through it ({@code dfs_dispatch_emit}). Created by the native glue only.
 *
 * <p>Not API.
 */
public final class DispatchEffect implements Effect<Object> {
  /** The {@code dfs_dispatch} handle; read by the native test helpers too. */
  private final long dispatch;

  private DispatchEffect(long dispatch) {
    this.dispatch = dispatch;
  }

  /**
   * Emits {@code event} to the connection: it runs the downstream transforms and the
   * connected effect on the calling thread, one event at a time per connection. Events
   * emitted after the connection was disposed are dropped.
   *
   * @param event the event (may be {@code null})
   * @throws RuntimeException (or Error) what a downstream effect or function threw, or
   *     what a source's {@code dispose()} threw when the connected effect disposed its
   *     connection (the sources are disconnected once that effect has returned)
   */
  @Override
  public void run(Object event) {
    Native.dispatchEmit(dispatch, event);
  }

  @Override
  public String toString() {
    return "DispatchEffect[" + Long.toHexString(dispatch) + "]";
  }
}
