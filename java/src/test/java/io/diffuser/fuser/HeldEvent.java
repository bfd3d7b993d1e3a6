package io.diffuser.fuser;

import io.diffuser.Effect;
import java.lang.ref.WeakReference;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An event held in the transforms of a fuser: {@link #fuser} is two extracts over a
 * source, and the inner one, given the event "block", waits until {@link #release} is
 * counted down. {@link #emitAndHold} emits it on a thread of its own and returns while
 * the event is inside the fuser's transforms, for the test to dispose the connection and
 * drop the fuser meanwhile; {@link #releaseAndJoin} lets it go on.
 */
public final class HeldEvent {
  /** Counted down when the event is in the inner transform. */
  public final CountDownLatch inTransforms = new CountDownLatch(1);
  /** Lets the inner transform return. */
  public final CountDownLatch release = new CountDownLatch(1);
  /** What the source was given when it connected. */
  public volatile Effect<Object> emitter;
  /** What the emitting thread's emission threw, if anything. */
  public final AtomicReference<Throwable> thrown = new AtomicReference<>();
  private Thread source;

  /**
   * Emits "block" on a thread of its own and returns once the event is in the inner
   * transform.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  public void emitAndHold() throws InterruptedException {
    source = new Thread(() -> {
      try {
        emitter.run("block");
      } catch (Throwable t) {
        thrown.set(t);
      }
    }, "emitting source");
    source.start();
    inTransforms.await();
  }

  /**
   * Lets the held event go on and waits until its emission returned.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  public void releaseAndJoin() throws InterruptedException {
    release.countDown();
    source.join();
  }

  /**
   * Runs the garbage collector until {@code weak} is cleared, or about a second.
   *
   * @param weak what should be collected
   * @return whether it was
   * @throws InterruptedException if interrupted while waiting
   */
  public static boolean collect(WeakReference<?> weak) throws InterruptedException {
    for (int i = 0; i < 100 && weak.get() != null; i++) {
      System.gc();
      Thread.sleep(10);
    }
    return weak.get() == null;
  }

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
