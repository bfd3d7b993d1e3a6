package io.diffuser.fuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.diffuser.Effect;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * Events racing the dispose of their connection on another thread, and the collection
 * of the fuser it held: an event still in the transforms when {@code dispose()} returns
 * is dropped, never delivered, and its emitter gets no exception. (The transforms run
 * before the connection's lock, so {@code dispose()} does not wait for them, and the
 * native nodes hold them only weakly: the collected fuser's next transform is where the
 * drop shows.)
 */
public class FuserDisposeRaceTest {
  /** Deterministic: the inner transform waits while the connection is disposed and GC runs. */
  @Test(timeout = 20000)
  public void anEventInFlightDuringDisposeOnAnotherThreadIsDroppedNotFailed() throws Exception {
    HeldEvent held = new HeldEvent();
    AtomicInteger delivered = new AtomicInteger();
    Fuser<String> outer = held.fuser("#" + System.nanoTime());
    Disposable connection = outer.connect(v -> delivered.incrementAndGet());
    WeakReference<Fuser<String>> weak = new WeakReference<>(outer);
    outer = null;

    held.emitAndHold();
    connection.dispose(); // returns at once: the event is not being delivered yet
    boolean collected = HeldEvent.collect(weak);
    held.releaseAndJoin();

    assertTrue("the fuser was collected while the event was in its transforms", collected);
    assertEquals("dispose() had returned: the event must not be delivered", 0, delivered.get());
    assertNull("the emitter of an event racing dispose() got an exception: " + held.thrown.get(), held.thrown.get());
  }

  /** The same race without any blocking: emitters on two threads, connect/dispose/GC on a third. */
  @Test(timeout = 20000)
  public void emissionsRacingDisposeAndGcNeverFail() throws Exception {
    long end = System.currentTimeMillis() + 3000;
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Effect<Object>> emitters = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      threads.add(new Thread(() -> {
        while (System.currentTimeMillis() < end && failure.get() == null) {
          for (Effect<Object> e : emitters) {
            try {
              e.run("x");
            } catch (Throwable th) {
              failure.compareAndSet(null, th);
            }
          }
        }
      }));
    }
    threads.forEach(Thread::start);
    int round = 0;
    while (System.currentTimeMillis() < end && failure.get() == null) {
      String tag = "#" + round++;
      Fuser<Object> fuser = Fuser.from(e -> {
        emitters.add(e);
        return () -> emitters.remove(e);
      });
      for (int i = 0; i < 5; i++) fuser = Fuser.extract((Object x) -> x + tag, fuser);
      Disposable connection = fuser.connect(v -> { });
      fuser = null;
      Thread.sleep(1);
      connection.dispose();
      if (round % 20 == 0) System.gc();
    }
    for (Thread t : threads) t.join();
    assertTrue("rounds " + round, round > 0);
    assertNull("an emission racing dispose() failed: " + failure.get(), failure.get());
  }
}
