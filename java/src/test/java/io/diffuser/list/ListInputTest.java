package io.diffuser.list;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.diffuser.Diffuser;
import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import org.junit.Test;

/** Bad input must get a clear exception (the core's), the same whatever the key form. */
public class ListInputTest {
  /** A list that only reports a size (no storage). */
  static final class Sized extends AbstractList<Integer> implements RandomAccess {
    final int n;
    Sized(int n) { this.n = n; }
    @Override public Integer get(int i) { return i; }
    @Override public int size() { return n; }
  }

  private static Throwable thrownBy(Runnable r) {
    try {
      r.run();
    } catch (Throwable t) {
      return t;
    }
    fail("no exception");
    return null;
  }

  /** A negative size() is refused by the glue, with key objects as with long keys. */
  @Test
  public void negativeSizeWithKeyObjectsGetsTheClearMessage() {
    Throwable longKeys = thrownBy(() -> ListDiff.byLongKey(List.of(1), new Sized(-1), x -> x, Objects::equals));
    assertTrue(longKeys.getMessage(), longKeys.getMessage().contains("size() is negative"));
    Throwable keyObjects = thrownBy(() -> ListDiff.of(List.of(1), new Sized(-1), x -> x));
    assertEquals(longKeys.getClass(), keyObjects.getClass());
    assertTrue(keyObjects.getMessage(), keyObjects.getMessage().contains("size() is negative"));
  }

  /** The same through intoList: a run with a list whose size() is negative. */
  @Test
  public void negativeSizeInIntoListGetsTheClearMessage() {
    Diffuser<List<Integer>> d = Diffuser.intoList(x -> x, (ListDiff c, List<Integer> l) -> {});
    Throwable t = thrownBy(() -> d.run(new Sized(-1)));
    assertTrue(t.toString(), t.getMessage() != null && t.getMessage().contains("negative"));
  }

  /** A count above the core's limit is refused by the core, with key objects as with long
   *  keys: nothing is made for the items first. */
  @Test
  public void countAboveTheLimitWithKeyObjectsIsRefusedByTheCore() {
    Throwable longKeys = thrownBy(() ->
        ListDiff.byLongKey(List.of(1), new Sized(Integer.MAX_VALUE), x -> x, Objects::equals));
    assertEquals(IllegalArgumentException.class, longKeys.getClass());
    Throwable keyObjects = thrownBy(() -> ListDiff.of(List.of(1), new Sized(Integer.MAX_VALUE), x -> x));
    assertEquals(keyObjects.toString(), IllegalArgumentException.class, keyObjects.getClass());
  }

  /** Sections whose item keys add up to more than an array can hold (1024 sections of
   *  2^22 item keys, one shared 32 MB array) are refused with an IllegalArgumentException. */
  @Test
  public void sectionsOfKeysWithTooManyItemsInAllIsRefusedClearly() {
    long[] items = new long[1 << 22];
    long[][] perSection = new long[1024][];
    long[] sectionKeys = new long[1024];
    for (int s = 0; s < 1024; s++) {
      perSection[s] = items;
      sectionKeys[s] = s;
    }
    Throwable t = thrownBy(() -> ListSectionsDiff.ofKeys(sectionKeys, perSection, new long[0], new long[0][]));
    assertEquals(t.toString(), IllegalArgumentException.class, t.getClass());
  }
}
