package io.diffuser.fuser;

/**
 * Something that can be stopped: a connection made by {@link Fuser#connect} or by
 * {@link Source#connect}.
 *
 * <p>The {@code dispose()} of a {@link Fuser#connect} connection waits for an event being
 * delivered to it on another thread to finish, so that nothing arrives after it returns:
 * it must not be called from code that event's delivery waits for (see
 * {@link Fuser#connect}).
 *
 * <p>The interface is the reference library's, one method and nothing else, so that a
 * class already implementing it (with a {@code close()} of its own, say) still compiles.
 * To scope a connection to a block:
 *
 * <pre>{@code
 * Disposable connection = fuser.connect(loop::dispatch);
 * try {
 *   // events flow until the block is left
 * } finally {
 *   connection.dispose();
 * }
 * }</pre>
 */
@FunctionalInterface
public interface Disposable {
  /**
   * Stops the connection and releases what it holds. Calling it again does nothing.
   */
  void dispose();
}
