package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.HeldEvent;
import java.lang.ref.WeakReference;
import org.junit.Test;

/**
 * An event still in the transforms of a loop connection's fuser on one thread while
 * another thread disposes that connection, after which nothing holds the fuser: the
 * event is dropped, as events emitted after the dispose are, and the emitter gets no
 * exception even if the fuser's objects were collected meanwhile.
 */
public class LoopConnectionRaceTest {
  @Test(timeout = 20000)
  public void anEventInFlightWhenItsLoopConnectionIsDisposedIsDropped() throws Exception {
    HeldEvent held = new HeldEvent();
    Fuser<String> sources = held.fuser("#" + System.nanoTime());
    try (Loop<Integer, String, String> loop =
        Loop.<Integer, String, String>builder(0, (model, event) -> Next.next(model + 1)).build()) {
      Disposable connection = loop.connect(sources);
      WeakReference<Fuser<String>> weak = new WeakReference<>(sources);
      sources = null;

      held.emitAndHold();
      connection.dispose();
      connection = null; // a disposed connection holds its fuser
      boolean collected = HeldEvent.collect(weak);
      held.releaseAndJoin();

      assertTrue("the fuser was collected while the event was in its transforms", collected);
      assertNull("the emitter of an event racing dispose() got an exception: " + held.thrown.get(), held.thrown.get());
      assertEquals("the event reached the loop after its connection was disposed", 0, (int) loop.model());
    }
  }
}
