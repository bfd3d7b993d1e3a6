package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;

import io.diffuser.Effect;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * A diffuser run at once from inside an effect (its own graph, not queued) drops its pin
 * when its run returns. But its graph may be joined with the outer one during that run
 * (a new tree over nodes of both, run from its effect): from then on its runs are queued
 * behind the outer pass, including one its own effect asks for right after the join.
 * That queued run still needs the diffuser's Java objects when the outer pass drains it.
 */
public class DiffuserMergedRunRetentionTest {
  private static boolean collected(WeakReference<?> ref) throws InterruptedException {
    for (int i = 0; i < 50 && ref.get() != null; i++) {
      System.gc();
      Thread.sleep(5);
    }
    return ref.get() == null;
  }

  /** Runs a temporary diffuser whose effect joins its graph with the outer one, then runs it again. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static WeakReference<Object> runJoining(Diffuser<Integer> outerShared, List<String> log) {
    Diffuser<Integer> innerShared = Diffuser.intoAlways(v -> { });
    Diffuser<Integer>[] self = new Diffuser[1];
    Effect<Integer> effect = new Effect<Integer>() {
      @Override
      public void run(Integer v) {
        log.add("inner:" + v);
        if (v == 1) {
          // A new tree over a node of each graph: its first run joins them; the outer
          // pass, which started first, keeps its lock, so this run is queued behind it.
          Diffuser.intoAll(outerShared, innerShared).run(100);
          // The inner graph is now the outer one: queued too.
          self[0].run(2);
        }
      }
    };
    Diffuser<Integer> inner = Diffuser.intoAll(innerShared, Diffuser.intoAlways(effect));
    self[0] = inner;
    inner.run(1); // not queued: a graph of its own when it started
    return new WeakReference<>(effect);
  }

  @Test(timeout = 60_000)
  public void aRunQueuedAfterItsGraphWasJoinedWithTheOuterOneKeepsItsDiffuser() {
    List<String> log = new ArrayList<>();
    boolean[] gone = {false};
    Diffuser<Integer> outerShared = Diffuser.intoAlways(v -> { });
    Diffuser<Integer> outer = Diffuser.intoAll(outerShared, Diffuser.intoAlways(n -> {
      WeakReference<Object> ref = runJoining(outerShared, log);
      try {
        gone[0] = collected(ref);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }));
    outer.run(0); // throws IllegalStateException ("run after it had been garbage collected") if the pin was dropped
    assertEquals("the queued run of the joined diffuser ran", List.of("inner:1", "inner:2"), log);
    assertEquals("the diffuser of a queued run was not collected before it ran", false, gone[0]);
  }
}
