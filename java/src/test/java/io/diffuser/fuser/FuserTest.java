package io.diffuser.fuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.Effect;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.Test;

/** Every combinator of Fuser, through the native core. */
public class FuserTest {
  private final List<Object> log = new CopyOnWriteArrayList<>();

  private Effect<Object> record(String tag) {
    return a -> log.add(tag + ":" + a);
  }

  private List<Object> take() {
    List<Object> copy = new ArrayList<>(log);
    log.clear();
    return copy;
  }

  @Test
  public void fromConnectsTheSourceOncePerConnect() {
    TestSource<String> source = new TestSource<>();
    Fuser<String> fuser = Fuser.from(source);
    assertEquals(0, source.connects.get());
    Disposable connection = fuser.connect(v -> log.add(v));
    assertEquals(1, source.connects.get());
    source.emit("a");
    source.emit(null);
    source.emit("b");
    assertEquals(Arrays.asList("a", null, "b"), take());
    connection.dispose();
    assertEquals(1, source.disposes.get());
    assertEquals(0, source.effects.size());
  }

  @Test
  public void eventsBeforeConnectAndAfterDisposeAreDropped() {
    TestSource<String> source = new TestSource<>();
    Fuser<String> fuser = Fuser.from(source);
    source.emit("before"); // nobody connected
    Disposable connection = fuser.connect(v -> log.add(v));
    Effect<String> sourceSide = source.effects.get(0);
    sourceSide.run("during");
    connection.dispose();
    sourceSide.run("after"); // a source that kept emitting after dispose
    sourceSide.run(null);
    assertEquals(Collections.singletonList("during"), take());
  }

  @Test
  public void disposeIsIdempotent() {
    TestSource<String> source = new TestSource<>();
    Disposable connection = Fuser.from(source).connect(v -> log.add(v));
    connection.dispose();
    connection.dispose();
    connection.dispose();
    assertEquals(1, source.disposes.get());
  }

  /**
   * A class of the reference API's users that implements Disposable next to a close() of
   * its own (here Closeable's, which throws IOException): it must keep compiling, so
   * Disposable declares dispose() and nothing else. This file does not compile otherwise.
   */
  static final class ClosableResource implements Disposable, java.io.Closeable {
    int disposed;
    int closed;

    @Override
    public void dispose() {
      disposed++;
    }

    @Override
    public void close() throws java.io.IOException {
      closed++;
    }
  }

  @Test
  public void disposableIsTheReferenceInterface() throws Exception {
    assertEquals(1, Disposable.class.getMethods().length);
    assertEquals("dispose", Disposable.class.getMethods()[0].getName());
    assertEquals(0, Disposable.class.getInterfaces().length);
    ClosableResource resource = new ClosableResource();
    Disposable disposable = resource;
    disposable.dispose();
    resource.close();
    assertEquals(1, resource.disposed);
    assertEquals(1, resource.closed);
  }

  @Test
  public void connectTwiceMakesIndependentConnections() {
    TestSource<String> source = new TestSource<>();
    Fuser<String> fuser = Fuser.from(source);
    Disposable first = fuser.connect(v -> log.add("1:" + v));
    Disposable second = fuser.connect(v -> log.add("2:" + v));
    assertEquals(2, source.connects.get());
    source.emit("a");
    first.dispose();
    source.emit("b");
    second.dispose();
    source.emit("c");
    assertEquals(Arrays.asList("1:a", "2:a", "2:b"), take());
  }

  @Test
  public void fromAllWithVarargsMergesAndDisposesAll() {
    TestSource<String> a = new TestSource<>();
    TestSource<String> b = new TestSource<>();
    Fuser<String> fuser = Fuser.fromAll(Fuser.from(a), Fuser.from(b));
    Disposable connection = fuser.connect(v -> log.add(v));
    a.emit("a1");
    b.emit("b1");
    a.emit("a2");
    connection.dispose();
    a.emit("a3");
    b.emit("b2");
    assertEquals(Arrays.asList("a1", "b1", "a2"), take());
    assertEquals(1, a.disposes.get());
    assertEquals(1, b.disposes.get());
  }

  @Test
  public void fromAllWithCollection() {
    TestSource<String> a = new TestSource<>();
    TestSource<String> b = new TestSource<>();
    List<Fuser<String>> children = new ArrayList<>(Arrays.asList(Fuser.from(a), Fuser.from(b)));
    Fuser<String> fuser = Fuser.fromAll(children);
    Disposable connection = fuser.connect(v -> log.add(v));
    b.emit("b");
    a.emit("a");
    connection.dispose();
    assertEquals(Arrays.asList("b", "a"), take());
  }

  @Test
  public void constructorsAreFromAll() {
    TestSource<Integer> ints = new TestSource<>();
    TestSource<Long> longs = new TestSource<>();
    Fuser<Number> varargs = new Fuser<Number>(Fuser.from(ints), Fuser.from(longs));
    Collection<Fuser<? extends Number>> list = new ArrayList<>();
    list.add(Fuser.from(ints));
    Fuser<Number> collection = new Fuser<>(list);
    Disposable d1 = varargs.connect(v -> log.add("v:" + v));
    Disposable d2 = collection.connect(v -> log.add("c:" + v));
    ints.emit(1);
    longs.emit(2L);
    d1.dispose();
    d2.dispose();
    assertEquals(Arrays.asList("v:1", "c:1", "v:2"), take());
  }

  @Test
  public void emptyFromAll() {
    Disposable d = new Fuser<String>().connect(v -> log.add(v));
    d.dispose();
    Fuser.fromAll(new ArrayList<Fuser<String>>()).connect(v -> log.add(v)).dispose();
    assertEquals(Collections.emptyList(), take());
  }

  @Test
  public void collectionsAndArraysAreCopied() {
    TestSource<String> a = new TestSource<>();
    TestSource<String> late = new TestSource<>();
    List<Fuser<String>> children = new ArrayList<>();
    children.add(Fuser.from(a));
    Fuser<String> viaFromAll = Fuser.fromAll(children);
    List<Fuser<? extends String>> wide = new ArrayList<>(children);
    Fuser<String> viaConstructor = new Fuser<>(wide);
    children.add(Fuser.from(late));
    wide.clear();
    @SuppressWarnings({"unchecked", "rawtypes"})
    Fuser<String>[] array = new Fuser[] {Fuser.from(a)};
    Fuser<String> viaArray = Fuser.fromAll(array);
    array[0] = Fuser.from(late);

    viaFromAll.connect(v -> log.add("1:" + v)).dispose();
    viaConstructor.connect(v -> log.add("2:" + v)).dispose();
    viaArray.connect(v -> log.add("3:" + v)).dispose();
    assertEquals(3, a.connects.get());
    assertEquals(0, late.connects.get());
  }

  @Test
  public void extractTransformsEvents() {
    TestSource<String> source = new TestSource<>();
    Fuser<Integer> fuser = Fuser.extract((String s) -> s == null ? -1 : s.length(), Fuser.from(source));
    Disposable d = fuser.connect(v -> log.add(v));
    source.emit("abc");
    source.emit(null);
    source.emit("");
    d.dispose();
    assertEquals(Arrays.asList(3, -1, 0), take());
  }

  @Test
  public void extractMayProduceNull() {
    TestSource<String> source = new TestSource<>();
    Disposable d = Fuser.extract((String s) -> (Object) null, Fuser.from(source)).connect(v -> log.add("got " + v));
    source.emit("x");
    d.dispose();
    assertEquals(Collections.singletonList("got null"), take());
  }

  @Test
  public void extractConstantEmitsTheConstant() {
    TestSource<String> source = new TestSource<>();
    Object constant = new Object();
    Fuser<Object> fuser = Fuser.extractConstant(constant, Fuser.from(source));
    List<Object> got = new ArrayList<>();
    Disposable d = fuser.connect(got::add);
    source.emit("a");
    source.emit(null);
    d.dispose();
    assertEquals(2, got.size());
    assertSame(constant, got.get(0));
    assertSame(constant, got.get(1));
  }

  @Test
  public void extractConstantNull() {
    TestSource<String> source = new TestSource<>();
    Disposable d = Fuser.extractConstant(null, Fuser.from(source)).connect(v -> log.add("got " + v));
    source.emit("a");
    d.dispose();
    assertEquals(Collections.singletonList("got null"), take());
  }

  @Test
  public void extractUnlessNullDropsNulls() {
    TestSource<String> source = new TestSource<>();
    Fuser<Integer> fuser = Fuser.extractUnlessNull(
        (String s) -> s.startsWith("#") ? Integer.valueOf(s.substring(1)) : null, Fuser.from(source));
    Disposable d = fuser.connect(v -> log.add(v));
    source.emit("#1");
    source.emit("skip");
    source.emit("#2");
    d.dispose();
    assertEquals(Arrays.asList(1, 2), take());
  }

  @Test
  public void composedTree() {
    TestSource<String> text = new TestSource<>();
    TestSource<Object> clicks = new TestSource<>();
    Fuser<String> events = new Fuser<>(
        Fuser.extract((String s) -> "text " + s, Fuser.from(text)),
        Fuser.extractConstant("click", Fuser.from(clicks)),
        Fuser.extractUnlessNull((String s) -> s.isEmpty() ? null : "nonempty", Fuser.from(text)));
    Disposable d = events.connect(v -> log.add(v));
    text.emit("a");
    clicks.emit(new Object());
    text.emit("");
    d.dispose();
    assertEquals(Arrays.asList("text a", "nonempty", "click", "text "), take());
  }

  @Test
  public void fusersCanBeDroppedAfterConnecting() {
    TestSource<String> source = new TestSource<>();
    Disposable d = Fuser.extract((String s) -> s + "!", Fuser.from(source)).connect(v -> log.add(v));
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    source.emit("a");
    d.dispose();
    assertEquals(Collections.singletonList("a!"), take());
  }

  @Test
  public void aDroppedUndisposedConnectionStaysConnected() throws Exception {
    TestSource<String> source = new TestSource<>();
    Fuser.from(source).connect(v -> log.add(v)); // result dropped on purpose
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(20);
    }
    source.emit("still here");
    assertEquals(Collections.singletonList("still here"), take());
    assertEquals(0, source.disposes.get());
  }

  @Test
  public void nestedEmissionFromInsideTheEffectIsDelivered() {
    TestSource<Integer> source = new TestSource<>();
    Disposable d = Fuser.from(source).connect(v -> {
      log.add("start " + v);
      if (v < 2) {
        source.emit(v + 1);
      }
      log.add("end " + v);
    });
    source.emit(0);
    d.dispose();
    assertEquals(Arrays.asList("start 0", "start 1", "start 2", "end 2", "end 1", "end 0"), take());
  }

  @Test
  public void anEffectMayDisposeItsOwnConnection() {
    TestSource<String> source = new TestSource<>();
    Disposable[] self = new Disposable[1];
    self[0] = Fuser.from(source).connect(v -> {
      log.add(v);
      self[0].dispose();
    });
    source.emit("a");
    source.emit("b");
    assertEquals(Collections.singletonList("a"), take());
    assertEquals(1, source.disposes.get());
  }

  @Test
  public void sourceEmittingDuringConnectIsDelivered() {
    Fuser<String> fuser = Fuser.from(effect -> {
      effect.run("hello");
      return () -> { };
    });
    Disposable d = fuser.connect(v -> log.add(v));
    d.dispose();
    assertEquals(Collections.singletonList("hello"), take());
  }

  @Test
  public void nullArgumentsAreRejected() {
    try {
      Fuser.from(null);
      fail();
    } catch (NullPointerException expected) {
      // ok
    }
    try {
      Fuser.fromAll(Fuser.from(new TestSource<String>()), null);
      fail();
    } catch (NullPointerException expected) {
      assertTrue(expected.getMessage().contains("children[1]"));
    }
    try {
      Fuser.from(new TestSource<String>()).connect(null);
      fail();
    } catch (NullPointerException expected) {
      // ok
    }
  }
}
