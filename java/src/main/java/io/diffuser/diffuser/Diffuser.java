// One file although over 400 lines, as Spotify's Diffuser: every combinator is a static
// method or a constructor of this class, which is what users import, and each is a few
// lines over Native (intoList over ListNative).
package io.diffuser.diffuser;

import io.diffuser.Effect;
import io.diffuser.Function;
import io.diffuser.internal.ListNative;
import io.diffuser.internal.ListReader;
import io.diffuser.internal.Native;
import io.diffuser.list.ListDiff;
import io.diffuser.list.ListSink;
import java.lang.ref.Reference;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.BiPredicate;
import java.util.function.ToLongFunction;

/**
 * Spreads an immutable model into side effects, running each effect only when the part
 * of the model it depends on changed.
 *
 * <p>Build a diffuser once from small pieces, then call {@link #run(Object)} with every
 * new model:
 *
 * <pre>{@code
 * Diffuser<Model> diffuser = new Diffuser<>(
 *     Diffuser.map(Model::title, Diffuser.into(titleLabel::setText)),
 *     Diffuser.map(Model::items, Diffuser.into(list::reload)));
 * diffuser.run(model1);   // runs every effect
 * diffuser.run(model2);   // runs only the effects whose part changed
 * }</pre>
 *
 * <p>A {@code Diffuser} is a handle to a node of the native Diffuser core, the same core
 * the Swift and C APIs use: caches, gating, ordering and locking all live there. A gate
 * compares the previous value with the new one as {@link Objects#equals(Object, Object)
 * Objects.equals(previous, new)} (so {@code previous.equals(new)} when they are not the
 * same object) and keeps the new value after every successful run, equal or not;
 * {@code null} is a valid value.
 * Every gating node ({@code into}, {@code intoWhen}, {@code intoAll}, {@code intoOnce})
 * keeps its cache inside the node, so a child used in two places shares one cache.
 *
 * <p><b>Threads and reentrancy.</b> {@code run} may be called from any thread. Runs over
 * one graph are serialized and none is lost; effects run on the calling thread. Running
 * forms the graph: a diffuser's first run joins it with every diffuser it was composed
 * from (and with every graph that shares a node with it), and from then on runs of any of
 * them are serialized; composing alone joins nothing. A {@code run} called from inside one
 * of the graph's own effects is queued and performed right after the current pass, before
 * the outermost {@code run} returns; if a queued run fails, the outermost {@code run}
 * throws its exception (later failures added as suppressed), even when its own pass
 * succeeded.
 *
 * <p>A run holds its graph's lock while its effects run, and a connection's
 * {@code dispose()} waits for an event being delivered on another thread. Like any two
 * locks, they deadlock when threads wait for each other in a circle: an effect that waits
 * for another thread's run of its own graph; graph A's effect running graph B on one
 * thread while B's effect runs A on another; an effect that disposes a connection whose
 * effect, delivering an event on another thread, runs the first effect's graph. Keep such
 * calls one-way, or make the second call after the run has returned.
 *
 * <p><b>Depth.</b> A tree nests at most {@link #MAX_DEPTH} combinators from its root down
 * to an effect; composing a deeper one throws {@link IllegalArgumentException}. Width is
 * not limited.
 *
 * <p><b>Failures.</b> An exception (or error) thrown by an {@link Effect}, a
 * {@link Function}, a {@link DidChange} or a value's {@code equals} aborts the run and
 * reaches the caller of {@code run} as the same object. Every node on the way to the
 * failure keeps its previous cache, so the next run with the same value retries it; the
 * diffuser stays usable.
 *
 * <p><b>Order.</b> User code is called in tree order, depth first: a fan-out runs its
 * first child entirely (a map's transform, then the comparisons, predicates and effects
 * below it) before the second child's transform is called, so a later transform sees
 * what an earlier effect did. The first exception in that order aborts the run; nothing
 * after it is called.
 *
 * <p><b>Memory.</b> A diffuser holds its effects, functions and predicates and the
 * diffusers it was composed from; the native node holds them only weakly and is released
 * when this object becomes unreachable. So a diffuser whose effects capture the object
 * that holds it (a screen and its {@code into(this::render)}) is collected with that
 * object, as in a library written in Java. A run asked for from inside an effect keeps
 * its diffuser until it is done.
 *
 * @param <A> the type of model the diffuser accepts
 */
public final class Diffuser<A> {
  /**
   * The most combinators a path from a diffuser down to an effect may pass through, the
   * first and the last included ({@link #into(Effect) into} is 1 deep, a {@link
   * #map(Function, Diffuser) map} over it 2). The native core runs and releases a tree by
   * calls on the thread's stack, one level at a time; this bound keeps that to about 100 KB
   * of the thread's stack. The C API's {@code DFS_MAX_DEPTH}.
   */
  public static final int MAX_DEPTH = 200;

  /** The native node. */
  private final long handle;

  /**
   * What the native node calls and the diffusers it was composed from: the node holds
   * its user objects by weak references, so that this object, and whatever holds it,
   * decides when they can be collected (an effect that captures the object holding its
   * diffuser does not keep either alive). Never read.
   */
  @SuppressWarnings("unused")
  private final Object held;

  private Diffuser(long handle, Object held) {
    this.handle = handle;
    this.held = held;
    Native.track(this, Native.Kind.DIFFUSER, handle);
  }

  private Diffuser(Diffuser<?>[] children, boolean gated) {
    this(fanOut(children, gated), children);
  }

  /**
   * A diffuser that runs {@code children}, in order, on the first value and whenever the
   * value is not equal to the previous one: the same as {@link #intoAll(Collection)}.
   *
   * @param children the children (the collection is copied)
   */
  public Diffuser(Collection<Diffuser<A>> children) {
    this(copy(children), true);
  }

  /**
   * A diffuser that runs {@code children}, in order, on the first value and whenever the
   * value is not equal to the previous one: the same as {@link #intoAll(Diffuser[])}.
   *
   * @param children the children (the array is copied)
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public Diffuser(Diffuser<A>... children) {
    this(copy(children), true);
  }

  /**
   * Renders {@code newValue}: runs every effect whose input changed since the last run.
   *
   * @param newValue the new model (may be {@code null})
   * @throws RuntimeException (or Error) the exception a user effect, function, predicate
   *     or {@code equals} threw, unchanged
   */
  public void run(A newValue) {
    try {
      Native.diffuserRun(handle, newValue, this);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * A diffuser that runs {@code effect} on every value.
   *
   * @param effect the effect
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoAlways(Effect<A> effect) {
    return new Diffuser<>(Native.diffuserIntoAlways(Objects.requireNonNull(effect, "effect")), effect);
  }

  /**
   * A diffuser that runs every child, in order, on every value (no gate of its own).
   * Not in the reference Java API; mirrors Swift's {@code intoAlways(children)}.
   *
   * @param children the children (the collection is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoAlways(Collection<Diffuser<A>> children) {
    return new Diffuser<>(copy(children), false);
  }

  /**
   * A diffuser that runs every child, in order, on every value (no gate of its own).
   * Not in the reference Java API; mirrors Swift's {@code intoAlways(children...)}.
   *
   * @param children the children (the array is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public static <A> Diffuser<A> intoAlways(Diffuser<A>... children) {
    return new Diffuser<>(copy(children), false);
  }

  /**
   * A diffuser that runs {@code diffuser} on the first value, and afterwards only when
   * {@code didChange.test(old, new)} returns {@code true}. The value is cached after every
   * successful run, whether or not the child ran, so {@code old} is always the previous
   * value.
   *
   * @param didChange decides whether to run the child
   * @param diffuser the child
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoWhen(DidChange<A> didChange, Diffuser<A> diffuser) {
    Objects.requireNonNull(didChange, "didChange");
    Objects.requireNonNull(diffuser, "diffuser");
    try {
      return new Diffuser<>(Native.diffuserIntoWhen(didChange, diffuser.handle), new Object[] {didChange, diffuser});
    } finally {
      Reference.reachabilityFence(diffuser);
    }
  }

  /**
   * A diffuser that runs {@code effect} on the first value, and afterwards only when
   * {@code didChange.test(old, new)} returns {@code true}. The value is cached after every
   * successful run.
   *
   * @param didChange decides whether to run the effect
   * @param effect the effect
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoWhen(DidChange<A> didChange, Effect<A> effect) {
    return new Diffuser<>(Native.diffuserIntoWhenEffect(
        Objects.requireNonNull(didChange, "didChange"), Objects.requireNonNull(effect, "effect")),
        new Object[] {didChange, effect});
  }

  /**
   * A diffuser that runs {@code effect} on the first value and whenever the value is not
   * equal ({@link Objects#equals(Object, Object)}) to the previous one.
   *
   * @param effect the effect
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> into(Effect<A> effect) {
    return new Diffuser<>(Native.diffuserInto(Objects.requireNonNull(effect, "effect")), effect);
  }

  /**
   * A diffuser that runs {@code effect} on the first value only.
   *
   * @param effect the effect
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoOnce(Effect<A> effect) {
    return new Diffuser<>(Native.diffuserIntoOnce(Objects.requireNonNull(effect, "effect")), effect);
  }

  /**
   * A diffuser that runs every child, in order, on the first value and whenever the
   * value is not equal to the previous one.
   *
   * <p>Each child runs entirely before the next one starts: for a child that is a
   * {@link #map(Function, Diffuser) map}, its transform is called at its turn, after
   * every effect of the children before it.
   *
   * @param children the children (the collection is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoAll(Collection<Diffuser<A>> children) {
    return new Diffuser<>(copy(children), true);
  }

  /**
   * A diffuser that runs every child, in order, on the first value and whenever the
   * value is not equal to the previous one.
   *
   * @param children the children (the array is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public static <A> Diffuser<A> intoAll(Diffuser<A>... children) {
    return new Diffuser<>(copy(children), true);
  }

  /**
   * A diffuser that feeds {@code diffuser} the part of each value that {@code transform}
   * selects.
   *
   * @param transform selects the part (called on every run that reaches the map)
   * @param diffuser the child
   * @param <A> the value type
   * @param <B> the type of the part
   * @return the diffuser
   */
  public static <A, B> Diffuser<A> map(Function<A, B> transform, Diffuser<B> diffuser) {
    Objects.requireNonNull(transform, "transform");
    Objects.requireNonNull(diffuser, "diffuser");
    try {
      return new Diffuser<>(Native.diffuserMap(transform, diffuser.handle), new Object[] {transform, diffuser});
    } finally {
      Reference.reachabilityFence(diffuser);
    }
  }

  /**
   * A diffuser that keeps a list view in step with a list: it diffs each new list against
   * the last one it applied and hands {@code sink} the changes and the new list together.
   *
   * <pre>{@code
   * Diffuser<Model> diffuser = new Diffuser<>(
   *     Diffuser.map(Model::rows, Diffuser.intoList(Row::id, Row::sameContent,
   *         (changes, rows) -> {
   *           adapter.rows = rows;
   *           changes.script.forEach(adapterReceiver);
   *         },
   *         ListDiff.Part.SCRIPT)));
   * }</pre>
   *
   * <p>The node is the native core's {@code intoList}, as in Swift and C:
   * <ul>
   *   <li>the first run calls {@code sink} with changes from the empty list (every item an
   *       insert), even for an empty list, and {@code isFirst} true (see
   *       {@link ListSink#apply(ListDiff, List, boolean)});
   *   <li>a later run whose list has the same keys in the same order with the same content
   *       does not call {@code sink}, and the node keeps the new list all the same;
   *   <li>if {@code sink} (or any function given here) throws, the run stops and the
   *       exception reaches the caller of {@link #run(Object)} unchanged; the node keeps
   *       the list it applied last, so the next run's changes start from what the view
   *       shows.
   * </ul>
   *
   * <p>The list is never {@code null}: a run with {@code null} throws a
   * {@link NullPointerException} that says so, and changes nothing.
   *
   * <p>Items are paired by key (see {@link ListDiff} for duplicates and moves): keys are
   * compared with {@link Object#equals(Object)} and {@link Object#hashCode()}
   * ({@code null} is a key like any other), exactly: the core asks for a key's hash (a
   * call of {@code key}, at most twice an item a run), and for the equality of two keys
   * with equal hashes (of the keys those calls returned). {@code sameContent.test(oldItem,
   * newItem)} is called once per matched pair; {@code false} makes it an update. The core
   * calls these functions when it needs them, in the same order as in Swift and C, also on
   * the list it kept from the previous run: they must be pure, and a list must not change
   * once it was run ({@code list.get(i)} is called, so give lists with fast random
   * access). A key is asked only where the diff needs it (never on the first run, and past
   * the common prefix and suffix only when both lists have items left there): a
   * {@code key} that throws for an item fails the first later run that needs that item's
   * key, and every later run that needs it while the item is in the list the node kept.
   *
   * @param key identifies an item
   * @param sameContent whether two matched items have the same content
   * @param sink applies the changes
   * @param parts what the changes carry besides the diff: a batch, the script
   * @param <T> the type of items
   * @return the diffuser, whose value is the list
   */
  public static <T> Diffuser<List<T>> intoList(Function<? super T, ?> key,
      BiPredicate<? super T, ? super T> sameContent, ListSink<T> sink, ListDiff.Part... parts) {
    return listNode(ListReader.byKey(key, sameContent), sink, parts);
  }

  /**
   * {@link #intoList(Function, BiPredicate, ListSink, ListDiff.Part...)} with content
   * compared by {@link Objects#equals(Object, Object)}.
   *
   * @param key identifies an item
   * @param sink applies the changes
   * @param parts what the changes carry besides the diff: a batch, the script
   * @param <T> the type of items
   * @return the diffuser, whose value is the list
   */
  public static <T> Diffuser<List<T>> intoList(Function<? super T, ?> key, ListSink<T> sink,
      ListDiff.Part... parts) {
    return listNode(ListReader.byKey(key, Objects::equals), sink, parts);
  }

  /**
   * {@link #intoList(Function, BiPredicate, ListSink, ListDiff.Part...)} for items
   * identified by a {@code long} key: two items are matched only if their keys are equal,
   * so the key function must give distinct items distinct keys (an id, not a hash). The
   * core compares the numbers itself, with no call of {@code equals}.
   *
   * @param key identifies an item
   * @param sameContent whether two matched items have the same content
   * @param sink applies the changes
   * @param parts what the changes carry besides the diff: a batch, the script
   * @param <T> the type of items
   * @return the diffuser, whose value is the list
   */
  public static <T> Diffuser<List<T>> intoListByLongKey(ToLongFunction<? super T> key,
      BiPredicate<? super T, ? super T> sameContent, ListSink<T> sink, ListDiff.Part... parts) {
    return listNode(ListReader.byLongKey(key, sameContent), sink, parts);
  }

  /** The intoList node over {@code reader}. */
  private static <T> Diffuser<List<T>> listNode(ListReader reader, ListSink<T> sink,
      ListDiff.Part... parts) {
    Objects.requireNonNull(sink, "sink");
    Objects.requireNonNull(parts, "parts");
    int flags = ListNative.flags(parts);
    return new Diffuser<>(ListNative.intoList(reader, reader.hasKeyObjects(), sink, flags), new Object[] {reader, sink});
  }

  /** {@code Diffuser[<native node>]}. */
  @Override
  public String toString() {
    return "Diffuser[" + Long.toHexString(handle) + "]";
  }

  private static Diffuser<?>[] copy(Collection<? extends Diffuser<?>> children) {
    return Objects.requireNonNull(children, "children").toArray(new Diffuser<?>[0]);
  }

  private static Diffuser<?>[] copy(Diffuser<?>[] children) {
    return Objects.requireNonNull(children, "children").clone();
  }

  /**
   * The handle of a new fan-out over a private copy of the children: gated
   * ({@code intoAll}) or not ({@code intoAlways}). The caller keeps the children reachable.
   */
  private static long fanOut(Diffuser<?>[] children, boolean gated) {
    long[] handles = new long[children.length];
    for (int i = 0; i < children.length; i++) {
      // The message is built only when it is needed: composing must not allocate per child.
      if (children[i] == null) throw new NullPointerException("children[" + i + "]");
      handles[i] = children[i].handle;
    }
    try {
      return gated ? Native.diffuserIntoAll(handles) : Native.diffuserIntoAlwaysAll(handles);
    } finally {
      Reference.reachabilityFence(children);
    }
  }
}
