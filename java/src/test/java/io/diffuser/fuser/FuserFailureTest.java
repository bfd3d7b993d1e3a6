package io.diffuser.fuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.fail;

import io.diffuser.Effect;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

/** Exceptions from user code reach the right caller as the same object. */
public class FuserFailureTest {
  private final List<Object> log = new ArrayList<>();

  private static Throwable emitCatching(TestSource<String> source, String event) {
    try {
      source.emit(event);
    } catch (Throwable t) {
      return t;
    }
    fail("emit(" + event + ") should have thrown");
    return null;
  }

  @Test
  public void effectExceptionReachesTheEmitterAndTheConnectionStaysUsable() {
    RuntimeException failure = new RuntimeException("effect");
    TestSource<String> source = new TestSource<>();
    Disposable d = Fuser.from(source).connect(v -> {
      log.add(v);
      if (v.equals("bad")) {
        throw failure;
      }
    });
    source.emit("a");
    assertSame(failure, emitCatching(source, "bad"));
    source.emit("b");
    assertSame(failure, emitCatching(source, "bad"));
    d.dispose();
    assertEquals(Arrays.asList("a", "bad", "b", "bad"), log);
  }

  @Test
  public void extractExceptionReachesTheEmitter() {
    IllegalStateException failure = new IllegalStateException("extract");
    TestSource<String> source = new TestSource<>();
    Disposable d = Fuser.extract((String s) -> {
      if (s.equals("bad")) {
        throw failure;
      }
      return s.toUpperCase();
    }, Fuser.from(source)).connect(log::add);
    assertSame(failure, emitCatching(source, "bad"));
    source.emit("ok");
    d.dispose();
    assertEquals(Arrays.asList("OK"), log);
  }

  @Test
  public void extractUnlessNullExceptionReachesTheEmitter() {
    Error failure = new AssertionError("unlessNull");
    TestSource<String> source = new TestSource<>();
    Disposable d = Fuser.extractUnlessNull((String s) -> {
      throw failure;
    }, Fuser.from(source)).connect(log::add);
    assertSame(failure, emitCatching(source, "x"));
    d.dispose();
  }

  @Test
  public void sourceConnectExceptionReachesTheCallerOfConnect() {
    RuntimeException failure = new RuntimeException("connect");
    TestSource<String> good = new TestSource<>();
    TestSource<String> bad = new TestSource<>();
    bad.connectFailure = failure;
    Fuser<String> fuser = Fuser.fromAll(Fuser.from(good), Fuser.from(bad));
    try {
      fuser.connect(log::add);
      fail();
    } catch (RuntimeException e) {
      assertSame(failure, e);
    }
    // The source connected before the failure was disconnected.
    assertEquals(1, good.connects.get());
    assertEquals(1, good.disposes.get());
    good.emit("dropped");
    assertEquals(new ArrayList<>(), log);

    // The fuser stays usable.
    bad.connectFailure = null;
    Disposable d = fuser.connect(log::add);
    good.emit("g");
    bad.emit("b");
    d.dispose();
    assertEquals(Arrays.asList("g", "b"), log);
  }

  @Test
  public void aSourceReturningNullIsAnError() {
    TestSource<String> source = new TestSource<>();
    source.returnNull = true;
    try {
      Fuser.from(source).connect(log::add);
      fail();
    } catch (NullPointerException expected) {
      // ok
    }
  }

  @Test
  public void sourceDisposeExceptionReachesTheCallerOfDisposeAfterEverySourceDisconnected() {
    RuntimeException failure = new RuntimeException("dispose");
    TestSource<String> a = new TestSource<>();
    TestSource<String> b = new TestSource<>();
    a.disposeFailure = failure;
    Disposable d = new Fuser<>(Fuser.from(a), Fuser.from(b)).connect(log::add);
    try {
      d.dispose();
      fail();
    } catch (RuntimeException e) {
      assertSame(failure, e);
    }
    assertEquals(1, a.disposes.get());
    assertEquals(1, b.disposes.get());
    d.dispose(); // idempotent, and nothing more to throw
    a.emit("x");
    b.emit("y");
    assertEquals(new ArrayList<>(), log);
  }

  @Test
  public void laterSourceDisposeExceptionsAreSuppressedByTheFirst() {
    RuntimeException first = new RuntimeException("first");
    RuntimeException second = new RuntimeException("second");
    TestSource<String> a = new TestSource<>();
    TestSource<String> b = new TestSource<>();
    TestSource<String> c = new TestSource<>();
    a.disposeFailure = first;
    b.disposeFailure = second;
    Disposable d = new Fuser<>(Fuser.from(a), Fuser.from(b), Fuser.from(c)).connect(log::add);
    try {
      d.dispose();
      fail();
    } catch (RuntimeException e) {
      assertSame(first, e);
      assertEquals(1, e.getSuppressed().length);
      assertSame(second, e.getSuppressed()[0]);
    }
    assertEquals(1, c.disposes.get());
  }

  @Test
  public void anEffectCatchingAnEmissionFailureLeavesNothingBehind() {
    RuntimeException failure = new RuntimeException("inner");
    TestSource<String> inner = new TestSource<>();
    Disposable innerConnection = Fuser.from(inner).connect(v -> {
      throw failure;
    });
    TestSource<String> outer = new TestSource<>();
    Disposable outerConnection = Fuser.from(outer).connect(v -> {
      try {
        inner.emit(v);
        fail();
      } catch (RuntimeException e) {
        assertSame(failure, e);
        log.add("caught " + v);
      }
    });
    outer.emit("1");
    outer.emit("2");
    innerConnection.dispose();
    outerConnection.dispose();
    assertEquals(Arrays.asList("caught 1", "caught 2"), log);
  }

  /**
   * A source that refuses after another one connected: the other is disconnected, and
   * what its dispose() throws is suppressed by the refusal that connect throws, not
   * handed to the thread's uncaught exception handler.
   */
  @Test
  public void aDisposeExceptionWhileARefusalUndoesTheConnectIsSuppressedByIt() {
    List<Throwable> uncaught = new ArrayList<>();
    Thread.UncaughtExceptionHandler saved = Thread.currentThread().getUncaughtExceptionHandler();
    Thread.currentThread().setUncaughtExceptionHandler((thread, failure) -> uncaught.add(failure));
    try {
      TestSource<String> a = new TestSource<>();
      TestSource<String> b = new TestSource<>();
      RuntimeException disposeFailure = new RuntimeException("a's dispose");
      RuntimeException refusal = new RuntimeException("b refuses");
      a.disposeFailure = disposeFailure;
      b.connectFailure = refusal;
      try {
        new Fuser<>(Fuser.from(a), Fuser.from(b)).connect(log::add);
        fail();
      } catch (RuntimeException e) {
        assertSame(refusal, e);
        assertEquals(1, e.getSuppressed().length);
        assertSame(disposeFailure, e.getSuppressed()[0]);
      }
      assertEquals(1, a.disposes.get());
      assertEquals(new ArrayList<>(), uncaught);
    } finally {
      Thread.currentThread().setUncaughtExceptionHandler(saved);
    }
  }

  @Test
  public void anEffectOnANativeThreadThatThrowsReportsCallbackToTheCEmitter() {
    TestSource<String> source = new TestSource<>();
    Disposable d = Fuser.from(source).connect(v -> {
      if (v.equals("bad")) {
        throw new RuntimeException("on a native thread");
      }
      log.add(v);
    });
    Effect<String> dispatch = source.effects.get(0);
    int[] statuses = NativeThreads.emitOnNativeThread(dispatch, new Object[] {"a", "bad", "b"});
    d.dispose();
    assertEquals(0, statuses[0]);
    assertEquals(5, statuses[1]); // DFS_ERR_CALLBACK
    assertEquals(0, statuses[2]);
    assertEquals(1, statuses[3]); // detached again
    assertEquals(Arrays.asList("a", "b"), log);
  }
}
