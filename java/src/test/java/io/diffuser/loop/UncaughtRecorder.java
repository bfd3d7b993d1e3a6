package io.diffuser.loop;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.rules.ExternalResource;

/**
 * A test rule that records what reaches the running thread's uncaught exception handler
 * during each test, and puts the thread's own handler back after it: for the loop
 * callbacks that cannot fail their loop and report there instead (a restart, a coalescing
 * key, a feedback's work, an inspector).
 */
final class UncaughtRecorder extends ExternalResource {
  /** What the handler received during the test, in order. */
  final List<Throwable> seen = Collections.synchronizedList(new ArrayList<>());

  private Thread.UncaughtExceptionHandler saved;

  @Override
  protected void before() {
    saved = Thread.currentThread().getUncaughtExceptionHandler();
    Thread.currentThread().setUncaughtExceptionHandler((thread, failure) -> seen.add(failure));
  }

  @Override
  protected void after() {
    Thread.currentThread().setUncaughtExceptionHandler(saved);
  }
}
