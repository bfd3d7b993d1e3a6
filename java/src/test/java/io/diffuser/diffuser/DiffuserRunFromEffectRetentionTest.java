package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * What a run asked for from inside an effect keeps alive. A run of another graph is not
 * queued: it is done when its {@code run} returns, so its diffuser can be collected at
 * once (an effect that renders a fresh, temporary diffuser per item does not grow for as
 * long as the outer run lasts). A run the core queues keeps its diffuser until it is done.
 */
public class DiffuserRunFromEffectRetentionTest {
  private static int uncollected(List<WeakReference<Object>> refs) throws InterruptedException {
    int left = refs.size();
    for (int i = 0; i < 50 && left > 0; i++) {
      System.gc();
      Thread.sleep(5);
      left = 0;
      for (WeakReference<Object> ref : refs) {
        if (ref.get() != null) left++;
      }
    }
    return left;
  }

  /** Runs a new diffuser (a graph of its own) and drops it; returns a reference to it. */
  private static WeakReference<Object> runTemporary(int value, List<Integer> log) {
    Diffuser<Integer> temporary = Diffuser.map((Integer v) -> v + 1, Diffuser.into(log::add));
    temporary.run(value);
    return new WeakReference<>(temporary);
  }

  /**
   * Runs queued behind the outer pass (diffusers sharing the outer one's child, made and
   * dropped inside its effect) interleaved with temporaries run at once: the queued ones
   * are kept until they ran, even with the garbage collector run in between, and the
   * temporaries are not.
   */
  @Test(timeout = 60_000)
  public void queuedRunsKeepTheirDiffusersAmongTemporariesThatDoNot() {
    List<Integer> log = new ArrayList<>();
    List<String> queued = new ArrayList<>();
    Diffuser<Integer> shared = Diffuser.intoAlways(v -> { });
    int[] left = {-1};
    Diffuser<Integer> outer = Diffuser.intoAll(shared, Diffuser.intoAlways(n -> {
      if (n != 0) {
        return;
      }
      List<WeakReference<Object>> temporaries = new ArrayList<>();
      for (int k = 0; k < 200; k++) {
        temporaries.add(runTemporary(k, log));
        if (k % 4 == 0) {
          String name = "q" + k;
          // Shares `shared` with the outer diffuser: one graph, so the run is queued.
          Diffuser.intoAll(shared, Diffuser.intoAlways((Integer v) -> queued.add(name + ":" + v))).run(k);
        }
      }
      try {
        left[0] = uncollected(temporaries);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      assertEquals("nothing queued ran before the outer pass ended", 0, queued.size());
    }));
    outer.run(0);
    assertEquals(200, log.size());
    assertEquals(50, queued.size());
    for (int i = 0; i < 50; i++) {
      assertEquals("q" + 4 * i + ":" + 4 * i, queued.get(i));
    }
    assertEquals("temporaries run at once and dropped are collected", 0, left[0]);
  }

  @Test(timeout = 60_000)
  public void aDiffuserRunAtOnceFromAnEffectIsNotKeptUntilTheOuterRunReturns() {
    List<Integer> log = new ArrayList<>();
    int[] left = {-1};
    Diffuser<Integer> outer = Diffuser.intoAlways(n -> {
      List<WeakReference<Object>> refs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        refs.add(runTemporary(i, log));
        // Not queued: it ran before run() returned.
        assertEquals(i + 1, log.size());
      }
      try {
        left[0] = uncollected(refs);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    });
    outer.run(100);
    assertEquals(100, log.size());
    assertTrue("temporary diffusers run and dropped inside the effect still reachable: " + left[0],
        left[0] == 0);
  }
}
