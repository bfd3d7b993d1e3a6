package io.diffuser;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.concurrent.atomic.AtomicReference;

/** What the depth tests of diffusers and fusers share: a refusal and a small stack. */
public final class DepthChecks {
  private DepthChecks() {}

  /** Checks that {@code compose} is refused for nesting a {@code what} past the bound. */
  public static void assertTooDeep(String what, Runnable compose) {
    try {
      compose.run();
      fail("a " + what + " past the depth bound was composed");
    } catch (IllegalArgumentException expected) {
      String message = expected.getMessage();
      assertTrue(message, message.contains("the " + what + " would nest"));
      assertTrue(message, message.contains("DFS_MAX_DEPTH"));
    }
  }

  /**
   * Runs {@code body} on a new thread with a stack of {@code kilobytes} and returns what
   * it threw, or {@code null}.
   */
  public static Throwable onSmallStack(int kilobytes, Runnable body) throws InterruptedException {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread thread =
        new Thread(
            null,
            () -> {
              try {
                body.run();
              } catch (Throwable t) {
                failure.set(t);
              }
            },
            "small stack",
            kilobytes * 1024L);
    thread.start();
    thread.join();
    return failure.get();
  }
}
