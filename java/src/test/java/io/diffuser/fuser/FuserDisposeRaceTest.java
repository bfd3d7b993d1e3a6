package io.diffuser.fuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.diffuser.Effect;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * Events racing the dispose of their connection on another thread, and the collection
 * of the fuser it held. An event's transforms are part of its connection's delivery, so
 * {@code dispose()} waits for an event inside them and the connection holds its fuser
 * until then; its emitter never gets an exception from the race.
 */
public class FuserDisposeRaceTest {
  /** Deterministic: the inner transform waits while the connection is disposed and GC runs. */
  @Test(timeout = 20000)
  public void anEventInsideTheTransformsIsDeliveredBeforeDisposeReturns() throws Exception {
    HeldEvent held = new HeldEvent();
    AtomicInteger delivered = new AtomicInteger();
    AtomicBoolean disposed = new AtomicBoolean();
    Fuser<String> outer = held.fuser("#" + System.nanoTime());
    Disposable connection = outer.connect(v -> {
      if (!disposed.get()) {
        delivered.incrementAndGet();
      }
    });
    WeakReference<Fuser<String>> weak = new WeakReference<>(outer);
    outer = null;

    held.emitAndHold();
    Disposable[] disposing = {connection};
    Thread disposer = new Thread(() -> {
      disposing[0].dispose(); // waits for the event inside the transforms
      disposed.set(true);
    });
    disposer.start();
    boolean collectedWhileHeld = HeldEvent.collect(weak);
    boolean disposedWhileHeld = disposed.get();
    held.releaseAndJoin();
    disposer.join();
    connection = null;
    disposing[0] = null;

    assertFalse("the fuser was collected while an event was inside its transforms", collectedWhileHeld);
    assertFalse("dispose() returned while an event was inside the transforms", disposedWhileHeld);
    assertEquals("the event inside the transforms reached the effect before dispose() returned", 1, delivered.get());
    assertNull("the emitter of an event racing dispose() got an exception: " + held.thrown.get(), held.thrown.get());
    assertTrue("a disposed and dropped connection lets its fuser go", HeldEvent.collect(weak));
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
