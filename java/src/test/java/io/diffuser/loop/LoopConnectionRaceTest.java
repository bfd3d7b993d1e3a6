package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import io.diffuser.Effect;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import java.lang.ref.WeakReference;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * An event still in the transforms of a loop connection's fuser on one thread while
 * another thread disposes that connection, after which nothing holds the fuser: the
 * event is dropped, as events emitted after the dispose are, and the emitter gets no
 * exception even if the fuser's objects were collected meanwhile.
 */
public class LoopConnectionRaceTest {
  private static volatile Effect<Object> emitter;

  @Test(timeout = 20000)
  public void anEventInFlightWhenItsLoopConnectionIsDisposedIsDropped() throws Exception {
    CountDownLatch inInner = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    String tag = "#" + System.nanoTime(); // capturing lambdas: each a new object
    Fuser<String> sources = Fuser.extract((Object x) -> x + tag,
        Fuser.extract((Object x) -> {
          if ("block".equals(x)) {
            inInner.countDown();
            try {
              goOn.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return x + tag;
        }, Fuser.from(e -> {
          emitter = e;
          return () -> { };
        })));
    try (Loop<Integer, String, String> loop =
        Loop.<Integer, String, String>builder(0, (model, event) -> Next.next(model + 1)).build()) {
      Disposable connection = loop.connect(sources);
      WeakReference<Fuser<String>> weak = new WeakReference<>(sources);
      sources = null;

      Thread source = new Thread(() -> {
        try {
          emitter.run("block");
        } catch (Throwable t) {
          thrown.set(t);
        }
      }, "emitting source");
      source.start();
      inInner.await();
      connection.dispose();
      connection = null; // a disposed connection holds its fuser
      for (int i = 0; i < 100 && weak.get() != null; i++) {
        System.gc();
        Thread.sleep(10);
      }
      boolean collected = weak.get() == null;
      goOn.countDown();
      source.join();

      org.junit.Assert.assertTrue("the fuser was collected", collected);
      assertNull("the emitter of an event racing dispose() got an exception: " + thrown.get(), thrown.get());
      assertEquals("the event reached the loop after its connection was disposed", 0, (int) loop.model());
    }
  }
}
