package io.diffuser.fuser;

import io.diffuser.Effect;
import java.util.concurrent.CountDownLatch;

/**
 * An event held in the transforms of a fuser: {@link #fuser} is two extracts over a
 * source, and the inner one, given the event "block", waits until {@link #release} is
 * counted down. Emit it with {@link #emitter} on a thread of its own; once
 * {@link #inTransforms} is counted down, the event is between the source and the
 * connection, for the test to dispose the connection and drop the fuser meanwhile.
 */
public final class HeldEvent {
  /** Counted down when the event is in the inner transform. */
  public final CountDownLatch inTransforms = new CountDownLatch(1);
  /** Lets the inner transform return. */
  public final CountDownLatch release = new CountDownLatch(1);
  /** What the source was given when it connected. */
  public volatile Effect<Object> emitter;

  /**
   * The fuser. Its transforms capture {@code tag}, so that each is a new object (a
   * non-capturing lambda is one object kept by its call site, never collected).
   *
   * @param tag appended to the event by each transform
   * @return the fuser
   */
  public Fuser<String> fuser(String tag) {
    return Fuser.extract((Object x) -> x + tag, Fuser.extract((Object x) -> {
      if ("block".equals(x)) {
        inTransforms.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return x + tag;
    }, Fuser.from(e -> {
      emitter = e;
      return () -> { };
    })));
  }
}
