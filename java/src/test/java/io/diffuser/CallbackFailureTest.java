package io.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.fail;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * Every kind of user callback throws, many times over, and the binding stays usable: the
 * caller gets the same Throwable each time (unchecked, error or checked), the graph or
 * connection that failed works on the next call, and nothing of the failure is left
 * behind for a later, successful call to throw.
 *
 * <p>The kinds: the {@link Effect} of each diffuser form and of a connection, a map's and
 * an extract's {@link Function}, a {@code DidChange}, a value's and a part's
 * {@code equals}, a {@link Source#connect}, and a source's {@link Disposable#dispose()},
 * also when the connection is disposed from inside its own effect.
 */
public class CallbackFailureTest {
  private static final int ROUNDS = 300;

  /** Throws the round's Throwable while armed; rounds rotate the three kinds. */
  private static final class Thrower {
    boolean armed;
    Throwable current;
    int round;

    void arm(int round) {
      this.round = round;
      armed = true;
      switch (round % 3) {
        case 0:
          current = new IllegalStateException("round " + round);
          break;
        case 1:
          current = new AssertionError("round " + round);
          break;
        default:
          current = new IOException("round " + round); // checked, thrown sneakily
          break;
      }
    }

    void maybeThrow() {
      if (armed) {
        CallbackFailureTest.<RuntimeException>sneaky(current);
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable t) throws T {
    throw (T) t;
  }

  private final Thrower thrower = new Thrower();
  private final List<Object> log = new ArrayList<>();

  /** Calls {@code call} armed (it must throw the thrower's Throwable), then disarmed. */
  private void failThenSucceed(String kind, Runnable call) {
    thrower.arm(thrower.round + 1);
    Throwable thrown = null;
    try {
      call.run();
    } catch (Throwable t) {
      thrown = t;
    }
    if (thrown == null) {
      fail(kind + ": round " + thrower.round + " should have thrown");
    }
    assertSame(kind + ": the callback's own Throwable", thrower.current, thrown);
    thrower.armed = false;
    call.run();
    assertNothingLeftBehind();
  }

  /** A fresh diffuser and connection work and throw nothing that an earlier call left. */
  private static void assertNothingLeftBehind() {
    List<Object> seen = new ArrayList<>();
    Diffuser<Integer> d = Diffuser.into(seen::add);
    d.run(1);
    d.run(1);
    Effect<?>[] emit = new Effect<?>[1];
    Disposable connection = Fuser.from((Source<String>) effect -> {
      emit[0] = effect;
      return () -> seen.add("disconnected");
    }).connect(seen::add);
    @SuppressWarnings("unchecked")
    Effect<String> e = (Effect<String>) emit[0];
    e.run("event");
    connection.dispose();
    assertEquals(Arrays.asList(1, "event", "disconnected"), seen);
  }

  @Test
  public void effectsOfEveryDiffuserForm() {
    Diffuser<Integer> into = Diffuser.into(v -> {
      thrower.maybeThrow();
      log.add("into " + v);
    });
    Diffuser<Integer> always = Diffuser.intoAlways(v -> {
      thrower.maybeThrow();
      log.add("always " + v);
    });
    Diffuser<Integer> when = Diffuser.intoWhen((Integer a, Integer b) -> true, v -> {
      thrower.maybeThrow();
      log.add("when " + v);
    });
    Diffuser<Integer> fanOut = Diffuser.intoAll(
        Diffuser.into(v -> log.add("first " + v)),
        Diffuser.map((Integer v) -> -v, Diffuser.into(v -> {
          thrower.maybeThrow();
          log.add("second " + v);
        })));
    for (int round = 0; round < ROUNDS; round++) {
      int value = round;
      log.clear();
      failThenSucceed("into", () -> into.run(value));
      failThenSucceed("intoAlways", () -> always.run(value));
      failThenSucceed("intoWhen", () -> when.run(value));
      failThenSucceed("intoAll", () -> fanOut.run(value));
      // A failed value is retried; the fan-out's first child had cached it.
      assertEquals(Arrays.asList("into " + value, "always " + value, "when " + value,
          "first " + value, "second " + -value), log);
      Diffuser<Integer> once = Diffuser.intoOnce(v -> {
        thrower.maybeThrow();
        log.add("once " + v);
      });
      failThenSucceed("intoOnce", () -> once.run(value));
      once.run(value + 1);
      assertEquals("once " + value, log.get(log.size() - 1));
    }
  }

  @Test
  public void functionsPredicatesAndEquals() {
    Diffuser<Integer> map = Diffuser.map((Integer v) -> {
      thrower.maybeThrow();
      return v * 2;
    }, Diffuser.into(v -> log.add("map " + v)));
    Diffuser<Integer> whenEffect = Diffuser.intoWhen((Integer a, Integer b) -> {
      thrower.maybeThrow();
      return true;
    }, v -> log.add("whenEffect " + v));
    Diffuser<Integer> whenChild = Diffuser.intoWhen((Integer a, Integer b) -> {
      thrower.maybeThrow();
      return true;
    }, Diffuser.intoAlways(v -> log.add("whenChild " + v)));
    Diffuser<Key> value = Diffuser.into(v -> log.add("value " + v));
    Diffuser<Integer> part = Diffuser.map((Integer v) -> new Key(v, thrower), Diffuser.into(v -> log.add("part " + v)));
    whenEffect.run(-1); // the predicate is asked from the second value on
    whenChild.run(-1);
    value.run(new Key(-1, thrower)); // equals is called from the second value on
    part.run(-1);
    for (int round = 0; round < ROUNDS; round++) {
      int v = round;
      log.clear();
      failThenSucceed("map", () -> map.run(v));
      failThenSucceed("intoWhen(effect)", () -> whenEffect.run(v));
      failThenSucceed("intoWhen(diffuser)", () -> whenChild.run(v));
      failThenSucceed("equals", () -> value.run(new Key(v, thrower)));
      failThenSucceed("equals of a part", () -> part.run(v));
      assertEquals(Arrays.asList("map " + 2 * v, "whenEffect " + v, "whenChild " + v, "value " + v,
          "part " + v), log);
    }
  }

  /** A value whose equals asks the thrower first. */
  private static final class Key {
    final int id;
    final Thrower thrower;

    Key(int id, Thrower thrower) {
      this.id = id;
      this.thrower = thrower;
    }

    @Override
    public boolean equals(Object other) {
      thrower.maybeThrow();
      return other instanceof Key && ((Key) other).id == id;
    }

    @Override
    public int hashCode() {
      return id;
    }

    @Override
    public String toString() {
      return Integer.toString(id);
    }
  }

  /** A source that keeps the effect it was given and asks the thrower in connect and dispose. */
  private final class Flaky implements Source<String> {
    final AtomicReference<Effect<String>> effect = new AtomicReference<>();
    boolean failConnect;
    boolean failDispose;

    @Override
    public Disposable connect(Effect<String> e) {
      if (failConnect) {
        thrower.maybeThrow();
      }
      effect.set(e);
      return () -> {
        effect.set(null);
        if (failDispose) {
          thrower.maybeThrow();
        }
      };
    }

    void emit(String event) {
      Effect<String> e = effect.get();
      if (e != null) {
        e.run(event);
      }
    }
  }

  @Test
  public void everyFuserCallback() {
    Flaky source = new Flaky();
    Fuser<String> plain = Fuser.from(source);
    Disposable effect = plain.connect(v -> {
      thrower.maybeThrow();
      log.add("effect " + v);
    });
    Flaky extractSource = new Flaky();
    Disposable extract = Fuser.extract((String s) -> {
      thrower.maybeThrow();
      return s + "!";
    }, Fuser.from(extractSource)).connect(log::add);
    Flaky unlessNullSource = new Flaky();
    Disposable unlessNull = Fuser.extractUnlessNull((String s) -> {
      thrower.maybeThrow();
      return s.isEmpty() ? null : s + "?";
    }, Fuser.from(unlessNullSource)).connect(log::add);
    for (int round = 0; round < ROUNDS; round++) {
      String event = "e" + round;
      log.clear();
      failThenSucceed("connection effect", () -> source.emit(event));
      failThenSucceed("extract", () -> extractSource.emit(event));
      failThenSucceed("extractUnlessNull", () -> unlessNullSource.emit(event));
      unlessNullSource.emit("");
      assertEquals(Arrays.asList("effect " + event, event + "!", event + "?"), log);

      Flaky failing = new Flaky();
      Fuser<String> both = Fuser.fromAll(Fuser.from(new Flaky()), Fuser.from(failing));
      failing.failConnect = true;
      Disposable[] connected = new Disposable[1];
      failThenSucceed("Source.connect", () -> connected[0] = both.connect(log::add));
      connected[0].dispose();

      failing.failConnect = false;
      failing.failDispose = true;
      failThenSucceed("Disposable.dispose of a source", () -> both.connect(log::add).dispose());
    }
    effect.dispose();
    extract.dispose();
    unlessNull.dispose();
  }

  /**
   * A connection disposed from inside its own effect disconnects its sources once the
   * effect has returned; a source's dispose that throws then reaches the emitter of the
   * event, not the void.
   */
  @Test
  public void aSourceDisposeFailingAfterADisposeFromInsideTheEffect() {
    for (int round = 0; round < ROUNDS; round++) {
      Flaky source = new Flaky();
      source.failDispose = true;
      Disposable[] connection = new Disposable[1];
      connection[0] = Fuser.from(source).connect(v -> {
        log.add(v);
        connection[0].dispose();
      });
      String event = "e" + round;
      failThenSucceed("Disposable.dispose after a dispose from inside the effect", () -> {
        if (thrower.armed) {
          source.emit(event);
        } else {
          connection[0].dispose(); // idempotent: nothing more to throw
          source.emit("dropped");
        }
      });
      assertEquals(null, source.effect.get());
      assertEquals(Arrays.asList(event), log);
      log.clear();
    }
  }
}
