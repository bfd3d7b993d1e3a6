package io.diffuser.internal;

/**
 * A callback's failure that was already reported where the user sees it (the thread's
 * uncaught exception handler, or a loop's inspector, which takes it from its trace of
 * the failure) and that only has to make the core's call fail: the native glue does not
 * keep it for the Java caller below, which did not cause it. Thrown by the binding's own
 * wrappers of callbacks that cannot fail a loop.
 *
 * <p>Not API.
 */
public final class ReportedFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * A failure for {@code reported}, which was reported already.
   *
   * @param reported what the callback threw
   */
  public ReportedFailure(Throwable reported) {
    // Named by the class of what was reported, not by its toString(), which may throw (a
    // getMessage() that fails): the failure must be made whatever the callback threw.
    super(reported.getClass().getName(), reported, false, false);
  }
}
