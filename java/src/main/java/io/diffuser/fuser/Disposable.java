package io.diffuser.fuser;

/**
 * Something that can be stopped: a connection made by {@link Fuser#connect} or by
 * {@link Source#connect}.
 *
 * <p>It is {@link AutoCloseable}, so a connection can be scoped with try-with-resources;
 * {@link #close()} is {@link #dispose()} and throws no checked exception:
 *
 * <pre>{@code
 * try (Disposable connection = fuser.connect(loop::dispatch)) {
 *   // events flow until the block is left
 * }
 * }</pre>
 */
@FunctionalInterface
public interface Disposable extends AutoCloseable {
  /**
   * Stops the connection and releases what it holds. Calling it again does nothing.
   */
  void dispose();

  /**
   * The same as {@link #dispose()}, for try-with-resources. Implementations should not
   * override it.
   */
  @Override
  default void close() {
    dispose();
  }
}
