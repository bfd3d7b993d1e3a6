package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.HeldEvent;
import java.lang.ref.WeakReference;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * An event still in the transforms of a loop connection's fuser on one thread while
 * another thread disposes that connection: the transforms are part of the delivery, so
 * the dispose waits for the event, which reaches the loop first; the connection holds
 * its fuser until then, and the emitter gets no exception.
 */
public class LoopConnectionRaceTest {
  /** A loop that counts its events. */
  private static Loop<Integer, String, String> counter() {
    return Loop.<Integer, String, String>builder(0, (model, event) -> Next.next(model + 1)).build();
  }

  /**
   * Connects {@code sources} to {@code loop}, drops what connect returned, and gives a
   * weak reference to the fuser (the caller drops its own).
   */
  private static WeakReference<Fuser<String>> connectAndForget(Loop<Integer, String, String> loop,
      Fuser<String> sources) {
    loop.connect(sources);
    return new WeakReference<>(sources);
  }

  @Test(timeout = 20000)
  public void anEventInsideTheTransformsReachesTheLoopBeforeItsConnectionIsDisposed() throws Exception {
    HeldEvent held = new HeldEvent();
    Fuser<String> sources = held.fuser("#" + System.nanoTime());
    try (Loop<Integer, String, String> loop = counter()) {
      Disposable connection = loop.connect(sources);
      WeakReference<Fuser<String>> weak = new WeakReference<>(sources);
      sources = null;

      held.emitAndHold();
      AtomicBoolean disposed = new AtomicBoolean();
      Disposable disposing = connection;
      Thread disposer = new Thread(() -> {
        disposing.dispose();
        disposed.set(true);
      });
      disposer.start();
      boolean collectedWhileHeld = HeldEvent.collect(weak);
      boolean disposedWhileHeld = disposed.get();
      held.releaseAndJoin();
      disposer.join();

      assertFalse("the fuser was collected while an event was inside its transforms", collectedWhileHeld);
      assertFalse("dispose() returned while an event was inside the transforms", disposedWhileHeld);
      assertNull("the emitter of an event racing dispose() got an exception: " + held.thrown.get(), held.thrown.get());
      assertEquals("the event inside the transforms reached the loop", 1, (int) loop.model());
    }
  }

  /**
   * A loop disposed while {@link Loop#connect} is connecting (here by the source's own
   * {@code connect}, on the same thread, the one interleaving a test can force): the
   * connection is disposed with the loop, and the loop does not keep its fuser.
   */
  @Test(timeout = 20000)
  public void aConnectionMadeAsTheLoopIsDisposedDoesNotKeepItsFuser() throws Exception {
    AtomicReference<Loop<Integer, String, String>> current = new AtomicReference<>();
    String tag = "#" + System.nanoTime();
    Fuser<String> sources = Fuser.extract((Object x) -> x + tag, Fuser.from(effect -> {
      current.get().dispose();
      return () -> {};
    }));
    Loop<Integer, String, String> loop = counter();
    current.set(loop);
    WeakReference<Fuser<String>> weak = connectAndForget(loop, sources);
    sources = null;

    assertFalse("the loop runs after its source disposed it", loop.start());
    assertTrue("the disposed loop still keeps the fuser of a connection made as it was disposed",
        HeldEvent.collect(weak));
    loop.dispose();
  }

  /**
   * A loop disposed on another thread, from inside a native call of that thread (a
   * callback of another loop), while {@link Loop#connect} is connecting: that thread's
   * native call may still use the connection's sources until it returns (were it a
   * delivery of theirs, they emit until it ends), so the fuser is kept until then, also
   * once {@code connect} has returned and let go of it; and no longer.
   */
  @Test(timeout = 20000)
  public void aLoopDisposedOnAnotherThreadAsAConnectionIsMadeKeepsItsFuserUntilThatThreadsCallReturns()
      throws Exception {
    AtomicReference<Loop<Integer, String, String>> current = new AtomicReference<>();
    CountDownLatch disposing = new CountDownLatch(1);
    CountDownLatch disposed = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    Loop<Integer, String, String> other = Loop.<Integer, String, String>builder(0, (model, event) -> {
      disposing.countDown();
      current.get().dispose();
      disposed.countDown();
      try {
        goOn.await();
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      return Next.next(model + 1);
    }).build();
    Thread disposer = new Thread(() -> other.dispatch("dispose"));
    String tag = "#" + System.nanoTime();
    Fuser<String> sources = Fuser.extract((String x) -> x + tag, Fuser.from(effect -> {
      disposer.start();
      // Lets the other thread's dispose begin; it waits for this callback.
      try {
        disposing.await();
        Thread.sleep(100);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      return () -> {};
    }));
    Loop<Integer, String, String> loop = counter();
    current.set(loop);
    WeakReference<Fuser<String>> weak = connectAndForget(loop, sources);
    sources = null;
    disposed.await();

    boolean collectedBeforeTheCallReturned = HeldEvent.collect(weak);
    goOn.countDown();
    disposer.join();
    assertFalse("the fuser was collected before the call of the thread that disposed the loop returned",
        collectedBeforeTheCallReturned);
    assertTrue("the disposed loop still keeps the fuser", HeldEvent.collect(weak));
    other.dispose();
  }
}
