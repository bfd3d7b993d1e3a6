package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

/**
 * Exceptions from user code reach the caller of run as the same object; the failing node
 * keeps its old cache and the diffuser stays usable.
 */
public class DiffuserFailureTest {
  private final List<String> log = new ArrayList<>();

  private static Throwable runCatching(Diffuser<String> d, String value) {
    try {
      d.run(value);
    } catch (Throwable t) {
      return t;
    }
    fail("run(" + value + ") should have thrown");
    return null;
  }

  /** Throws {@code failure} while {@code armed[0]} is true. */
  private static final class Failing {
    final RuntimeException failure = new RuntimeException("boom");
    boolean armed = true;

    void maybeThrow() {
      if (armed) {
        throw failure;
      }
    }
  }

  @Test
  public void effectExceptionIsTheSameObjectAndTheLeafRetries() {
    Failing f = new Failing();
    Diffuser<String> d = Diffuser.into(v -> {
      log.add("e:" + v);
      f.maybeThrow();
    });
    assertSame(f.failure, runCatching(d, "a"));
    assertSame(f.failure, runCatching(d, "a")); // same value: retried, not skipped
    f.armed = false;
    d.run("a");
    d.run("a"); // now cached
    d.run("b");
    assertEquals(Arrays.asList("e:a", "e:a", "e:a", "e:b"), log);
  }

  @Test
  public void failureInOneChildKeepsTheParentsCache() {
    Failing f = new Failing();
    Diffuser<String> d = Diffuser.intoAll(
        Diffuser.into(v -> log.add("1:" + v)),
        Diffuser.into(v -> {
          log.add("2:" + v);
          f.maybeThrow();
        }),
        Diffuser.into(v -> log.add("3:" + v)));
    assertSame(f.failure, runCatching(d, "a"));
    f.armed = false;
    d.run("a"); // the root gate kept no value: it runs again; leaf 1 had cached "a"
    d.run("a");
    assertEquals(Arrays.asList("1:a", "2:a", "2:a", "3:a"), log);
  }

  @Test
  public void functionExceptionIsTheSameObject() {
    Failing f = new Failing();
    Diffuser<String> d = Diffuser.map((String v) -> {
      f.maybeThrow();
      return v.length();
    }, Diffuser.into(n -> log.add("len:" + n)));
    assertSame(f.failure, runCatching(d, "abc"));
    f.armed = false;
    d.run("abc");
    assertEquals(Arrays.asList("len:3"), log);
  }

  @Test
  public void didChangeExceptionIsTheSameObjectAndTheOldValueStays() {
    Failing f = new Failing();
    f.armed = false;
    List<String> asked = new ArrayList<>();
    Diffuser<String> d = Diffuser.intoWhen((String o, String n) -> {
      asked.add(o + "->" + n);
      f.maybeThrow();
      return true;
    }, v -> log.add("e:" + v));
    d.run("a");
    f.armed = true;
    assertSame(f.failure, runCatching(d, "b"));
    f.armed = false;
    d.run("c"); // still compared against "a"
    assertEquals(Arrays.asList("a->b", "a->c"), asked);
    assertEquals(Arrays.asList("e:a", "e:c"), log);
  }

  @Test
  public void didChangeExceptionWithDiffuserChild() {
    IllegalArgumentException failure = new IllegalArgumentException("no");
    Diffuser<String> d = Diffuser.intoWhen((o, n) -> {
      throw failure;
    }, Diffuser.intoAlways(v -> log.add("e:" + v)));
    d.run("a");
    assertSame(failure, runCatching(d, "b"));
    assertEquals(Arrays.asList("e:a"), log);
  }

  /** A value whose equals throws while armed. */
  private static final class Flaky {
    static final RuntimeException FAILURE = new UnsupportedOperationException("equals");
    static boolean armed;
    final int id;

    Flaky(int id) {
      this.id = id;
    }

    @Override
    public boolean equals(Object other) {
      if (armed) {
        throw FAILURE;
      }
      return other instanceof Flaky && ((Flaky) other).id == id;
    }

    @Override
    public int hashCode() {
      return id;
    }

    @Override
    public String toString() {
      return "Flaky" + id;
    }
  }

  @Test
  public void equalsExceptionIsTheSameObjectAndTheCacheStays() {
    Diffuser<Object> d = Diffuser.into(v -> log.add("e:" + v));
    d.run(new Flaky(1));
    Flaky.armed = true;
    try {
      d.run(new Flaky(2));
      fail();
    } catch (UnsupportedOperationException e) {
      assertSame(Flaky.FAILURE, e);
    } finally {
      Flaky.armed = false;
    }
    d.run(new Flaky(1)); // still cached: equal, no effect
    d.run(new Flaky(2));
    d.run(null);
    assertEquals(Arrays.asList("e:Flaky1", "e:Flaky2", "e:null"), log);
  }

  @Test
  public void errorsAndCheckedExceptionsPassUnchanged() {
    AssertionError error = new AssertionError("error");
    Diffuser<String> d1 = Diffuser.intoAlways(v -> {
      throw error;
    });
    assertSame(error, runCatching(d1, "x"));

    Exception checked = new java.io.IOException("checked");
    Diffuser<String> d2 = Diffuser.intoAlways(v -> DiffuserFailureTest.<RuntimeException>sneaky(checked));
    assertSame(checked, runCatching(d2, "x"));
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable t) throws T {
    throw (T) t;
  }

  @Test
  public void failureInAQueuedRunReachesTheOuterCaller() {
    RuntimeException failure = new RuntimeException("queued");
    Diffuser<Integer>[] self = newArray();
    self[0] = Diffuser.intoAlways(v -> {
      log.add("run " + v);
      if (v == 1) {
        self[0].run(2);
      } else {
        throw failure;
      }
    });
    try {
      self[0].run(1);
      fail();
    } catch (RuntimeException e) {
      assertSame(failure, e);
    }
    assertEquals(Arrays.asList("run 1", "run 2"), log);
  }

  @Test
  public void theFirstFailureWinsWhenAQueuedRunFailsToo() {
    RuntimeException first = new RuntimeException("first");
    RuntimeException second = new RuntimeException("second");
    Diffuser<Integer>[] self = newArray();
    self[0] = Diffuser.intoAlways(v -> {
      if (v == 1) {
        self[0].run(2);
        throw first;
      }
      throw second;
    });
    try {
      self[0].run(1);
      fail();
    } catch (RuntimeException e) {
      assertSame(first, e);
    }
  }

  @Test
  public void anExceptionCaughtInsideAnEffectDoesNotLeak() {
    RuntimeException inner = new RuntimeException("inner");
    Diffuser<String> failing = Diffuser.intoAlways(v -> {
      throw inner;
    });
    Diffuser<String> outer = Diffuser.intoAlways(v -> {
      try {
        failing.run(v);
        fail();
      } catch (RuntimeException e) {
        assertSame(inner, e);
        log.add("caught");
      }
    });
    outer.run("a");
    outer.run("b");
    assertEquals(Arrays.asList("caught", "caught"), log);
  }

  @Test
  public void anExceptionFromANestedRunPropagatesThroughTheOuterEffect() {
    RuntimeException inner = new RuntimeException("inner");
    Diffuser<String> failing = Diffuser.intoAlways(v -> {
      throw inner;
    });
    Diffuser<String> outer = Diffuser.into(failing::run);
    assertSame(inner, runCatching(outer, "a"));
    assertSame(inner, runCatching(outer, "a"));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <A> Diffuser<A>[] newArray() {
    return new Diffuser[1];
  }
}
