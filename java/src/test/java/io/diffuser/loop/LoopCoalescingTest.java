package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * Coalescing keys: each queued entry keeps the key it was sent with, and a key that fails
 * loses no event (one that cannot be hashed when sent: see {@link LoopUncaughtTest}).
 */
public class LoopCoalescingTest {
  /** An event whose key is read from a field (a pooled or reused event object). */
  static final class Ev {
    final String name;
    String key;

    Ev(String name, String key) {
      this.name = name;
      this.key = key;
    }
  }

  /**
   * The key is taken when the event is sent, so a queued entry keeps the key it was
   * given: one object queued twice with two keys is two entries, and handling one leaves
   * the other's key as it was, for the next event with it to replace.
   */
  @Test
  public void aQueuedEventKeepsItsKeyWhenTheSameObjectWasHandledUnderAnotherKey() {
    ManualExecutor executor = new ManualExecutor();
    List<String> seen = new CopyOnWriteArrayList<>();
    try (Loop<Integer, Ev, Void> loop = Loop.<Integer, Ev, Void>builder(0, (model, event) -> {
      seen.add(event.name);
      return Next.next(model + 1);
    }).executor(executor, 1).coalescing(event -> event.key).build()) {
      executor.runAll(); // the start
      Ev a = new Ev("a", "y");
      Ev e = new Ev("e", "x");
      loop.dispatch(a); // [a(y)]
      loop.dispatch(e); // [a(y), e(x)]
      e.key = "y";
      loop.dispatch(e); // replaces a in place: [e(y), e(x)]
      assertTrue(executor.runNext()); // handles e(y); queue [e(x)]
      loop.dispatch(new Ev("b", "x")); // must replace e(x): [b(x)]
      executor.runAll();
      assertEquals("b replaced the queued x entry", List.of("e", "b"), seen);
    }
  }

  /** A key object whose hashCode throws once broken. */
  static final class BadKey {
    volatile boolean broken;

    @Override
    public int hashCode() {
      if (broken) {
        throw new IllegalStateException("hashCode");
      }
      return 1;
    }

    @Override
    public boolean equals(Object other) {
      return other == this;
    }
  }

  /**
   * A key is hashed only when its event is sent: one that cannot be hashed later, while
   * its event is queued, does not keep the update from being called with the event.
   */
  @Test
  public void aKeysHashCodeDoesNotFailTheUpdate() {
    ManualExecutor executor = new ManualExecutor();
    BadKey key = new BadKey();
    List<LoopTrace<Integer, Integer, Void>> traces = new CopyOnWriteArrayList<>();
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum)
        .executor(executor).inspector(traces::add).coalescing((Integer event) -> key).build()) {
      executor.runAll();
      assertTrue(loop.dispatch(2));
      key.broken = true;
      executor.runAll();
      assertEquals("the update ran", Integer.valueOf(2), loop.model());
    }
  }

  /**
   * A loop coalescing by ever new keys keeps a number only for the keys of events it still
   * holds: each key is forgotten once its event is handled, replaced, dropped or refused,
   * so what the binding keeps does not grow with the keys it has seen.
   */
  @Test
  public void keysAreForgottenOnceTheirEventsAreGone() {
    ManualExecutor executor = new ManualExecutor();
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum)
        .executor(executor).coalescing((Integer event) -> "key-" + event).build()) {
      executor.runAll();
      int expected = 0;
      for (int round = 0; round < 50; round++) {
        for (int i = 1; i <= 100; i++) {
          assertTrue(loop.dispatch(round * 100 + i));
          expected += round * 100 + i;
        }
        assertTrue("the same key replaces the queued event", loop.dispatch(round * 100 + 1));
        executor.runAll();
      }
      assertEquals("every event was handled once", Integer.valueOf(expected), loop.model());
      assertEquals("no key is kept for events handled", 0, loop.keys.size());

      assertTrue(loop.dispatch(1));
      assertTrue(loop.dispatch(2));
      assertTrue(loop.dispatch(1));
      assertEquals("the keys of the queued events are kept", 2, loop.keys.size());
      loop.stop();
      assertEquals("the keys of the events the stop dropped are forgotten", 0, loop.keys.size());
      assertFalse("a stopped loop refuses", loop.dispatch(3));
      assertEquals("the key of a refused event is forgotten", 0, loop.keys.size());
    }
  }

  /**
   * Equal key objects share one number while an event with it is queued, however many of
   * them came back meanwhile: the key of an event that replaced the queued one comes back
   * at once, and a third event with an equal key still replaces the queued one. (Fails if
   * a key object's count grows only when it is first numbered: the number would be
   * forgotten while its event waits, and the third event queued beside it.)
   */
  @Test
  public void aReplacingKeyThatCameBackLeavesTheQueuedEventItsNumber() {
    ManualExecutor executor = new ManualExecutor();
    List<Integer> seen = new CopyOnWriteArrayList<>();
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, (model, event) -> {
      seen.add(event);
      return model + event;
    }).executor(executor).coalescing((Integer event) -> new String("k")).build()) {
      executor.runAll();
      assertTrue(loop.dispatch(1));
      assertTrue(loop.dispatch(10)); // replaces 1; its own key comes back at once
      assertTrue(loop.dispatch(100)); // an equal key: still replaces
      assertEquals("one number for the queued event", 1, loop.keys.size());
      executor.runAll();
      assertEquals("only the last event was handled", List.of(100), seen);
      assertEquals("and its key forgotten", 0, loop.keys.size());
    }
  }

  /** Key objects with one hash, equal only to themselves; equals throws once broken. */
  static final class Colliding {
    static volatile boolean broken;
    final String name;

    Colliding(String name) {
      this.name = name;
    }

    @Override
    public int hashCode() {
      return 1;
    }

    @Override
    public boolean equals(Object other) {
      if (broken) {
        throw new IllegalStateException("equals of " + name);
      }
      return other == this;
    }
  }

  /**
   * A key object is compared only while its event is sent: forgetting it once its events
   * are gone compares it with no other key, even one with the same hash numbered before it,
   * so a key's equals that fails later neither fails an unrelated event's key nor leaves
   * the key object numbered.
   */
  @Test
  public void aKeyIsNotComparedOnceItsEventsAreGone() {
    Colliding a = new Colliding("a");
    Colliding b = new Colliding("b");
    ManualExecutor executor = new ManualExecutor();
    AtomicReference<Loop<Integer, String, Void>> self = new AtomicReference<>();
    List<Throwable> uncaught = new CopyOnWriteArrayList<>();
    Thread.UncaughtExceptionHandler old = Thread.currentThread().getUncaughtExceptionHandler();
    Thread.currentThread().setUncaughtExceptionHandler((thread, failure) -> uncaught.add(failure));
    try (Loop<Integer, String, Void> loop = Loop.<Integer, String>reducer(0, (model, event) -> {
      if (event.equals("a1")) {
        self.get().dispatch("b"); // b's key object is numbered after a's, still held
        self.get().dispatch("a2");
      }
      return model + 1;
    }).executor(executor).coalescing((String e) -> e.startsWith("a") ? a : e.startsWith("b") ? b : e)
        .build()) {
      self.set(loop);
      executor.runAll();
      loop.dispatch("a1");
      executor.runAll(); // every key came back
      Colliding.broken = true;
      loop.dispatch("c"); // forgets a and b
      Colliding.broken = false;
      assertEquals("no key object was compared after its events were gone", List.of(), uncaught);
      assertEquals("only the queued event's key object is kept", 1, loop.keys.size());
      executor.runAll();
      assertEquals("every key object is forgotten", 0, loop.keys.size());
    } finally {
      Colliding.broken = false;
      Thread.currentThread().setUncaughtExceptionHandler(old);
    }
  }
}
