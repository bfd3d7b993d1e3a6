package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * A run of an unrelated diffuser from inside an effect is not queued: it is done when its
 * {@code run} returns, so nothing needs that diffuser afterwards. The binding pins the
 * Java diffuser of every run asked for from inside a native call (in case the core queued
 * it) until the outermost native call returns, so an effect that renders fresh, temporary
 * diffusers (one per item, say) keeps every one of them, with its native node and global
 * reference, for as long as the outer run lasts: a long outer call (a render of many
 * items, a source whose connect emits a stream) grows until the heap is exhausted
 * (3,000,000 small temporaries inside one run end in OutOfMemoryError with the test
 * JVM's 256 MB heap, while the same loop outside an effect runs in constant memory).
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
