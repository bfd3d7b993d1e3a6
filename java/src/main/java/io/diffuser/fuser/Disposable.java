package io.diffuser.fuser;

/**
 * Something that can be stopped: a connection made by {@link Fuser#connect} or by
 * {@link Source#connect}.
 */
@FunctionalInterface
public interface Disposable {
  /**
   * Stops the connection and releases what it holds. Calling it again does nothing.
   */
  void dispose();
}
