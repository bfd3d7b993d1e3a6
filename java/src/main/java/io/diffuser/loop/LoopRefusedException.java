package io.diffuser.loop;

/**
 * A loop refused an event: it is stopped (start it again) or disposed (for good).
 *
 * <p>An {@link IllegalStateException}, so that code that catches those goes on working;
 * {@link #isDisposed()} tells the two refusals apart without reading the message.
 */
public final class LoopRefusedException extends IllegalStateException {
  /** The serialized form: the message and {@link #isDisposed()}. */
  private static final long serialVersionUID = 1L;

  /** Whether the loop was disposed rather than stopped. */
  private final boolean disposed;

  LoopRefusedException(boolean disposed) {
    super(disposed ? "the loop was disposed: it accepts no more events"
        : "the loop is stopped: start it before dispatching");
    this.disposed = disposed;
  }

  /**
   * Whether the loop was disposed, or is being disposed (no event will ever be accepted),
   * rather than stopped or stopping.
   *
   * @return true if disposed, false if stopped
   */
  public boolean isDisposed() {
    return disposed;
  }
}
