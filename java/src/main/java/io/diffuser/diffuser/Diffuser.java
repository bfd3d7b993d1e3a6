package io.diffuser.diffuser;

import io.diffuser.Effect;
import io.diffuser.Function;
import io.diffuser.internal.Native;
import java.lang.ref.Reference;
import java.util.Collection;
import java.util.Objects;

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
 * the Swift and C APIs use: caches, gating, ordering and locking all live there. Values
 * are compared with {@link Objects#equals(Object, Object)}; {@code null} is a valid value.
 * Every gating node ({@code into}, {@code intoWhen}, {@code intoAll}, {@code intoOnce})
 * keeps its cache inside the node, so a child used in two places shares one cache.
 *
 * <p><b>Threads and reentrancy.</b> {@code run} may be called from any thread. Runs over
 * one graph (a diffuser and every diffuser composed with it) are serialized and none is
 * lost; effects run on the calling thread. A {@code run} called from inside one of the
 * graph's own effects is queued and performed right after the current pass, before the
 * outermost {@code run} returns.
 *
 * <p><b>Failures.</b> An exception (or error) thrown by an {@link Effect}, a
 * {@link Function}, a {@link DidChange} or a value's {@code equals} aborts the run and
 * reaches the caller of {@code run} as the same object. Every node on the way to the
 * failure keeps its previous cache, so the next run with the same value retries it; the
 * diffuser stays usable.
 *
 * <p><b>Memory.</b> The native node is released when this object becomes unreachable;
 * diffusers composed from it keep what they need. A {@link #map(Function, Diffuser) map}
 * makes its native node only when one is needed: most maps are composed into a fan-out of
 * maps, which is built over their children (see {@link #intoAll(Collection)}) and never
 * needs them.
 *
 * @param <A> the type of model the diffuser accepts
 */
public final class Diffuser<A> {
  /**
   * The native node; 0 for a map whose node is not made yet (see {@link #handle()}).
   * Written once, from 0 to the node, under this object's lock.
   */
  private volatile long handle;
  /**
   * For a diffuser made by {@link #map(Function, Diffuser)}: its transform and child, so
   * that a fan-out whose children are all maps can be built as one native node that
   * selects every part with one call ({@code Native.diffuserMapAll}); {@code null}
   * otherwise. A map node has no state, so running the maps' children under that node
   * instead of under the maps is invisible; the child's Java object is kept so that its
   * handle stays valid for as long as a fan-out may still be built from this map.
   */
  private final Function<?, ?> transform;
  private final Diffuser<?> mapped;

  private Diffuser(long handle) {
    this(handle, null, null);
  }

  private Diffuser(long handle, Function<?, ?> transform, Diffuser<?> mapped) {
    this.handle = handle;
    this.transform = transform;
    this.mapped = mapped;
    if (handle != 0) Native.track(this, Native.Kind.DIFFUSER, handle);
  }

  /**
   * The native node, made now if this is a map that has none yet. A map's node is made
   * lazily because a fan-out of maps is built over the maps' children and never needs it:
   * in a typical tree that is a native node, a handle and a global reference to the
   * transform saved per map, the larger part of building the tree.
   */
  private long handle() {
    long made = handle;
    return made != 0 ? made : makeMapNode();
  }

  private synchronized long makeMapNode() {
    if (handle == 0) {
      long made = Native.diffuserMap(transform, mapped.handle());
      try {
        Native.track(this, Native.Kind.DIFFUSER, made);
      } catch (RuntimeException | Error e) {
        Native.diffuserRelease(made);
        throw e;
      }
      handle = made;
    }
    return handle;
  }

  /**
   * A diffuser that runs {@code children}, in order, on the first value and whenever the
   * value is not equal to the previous one: the same as {@link #intoAll(Collection)}.
   *
   * <p>If there are at least two children and every one is a map, the transforms of the
   * maps are called together, in order, before the first child runs: see
   * {@link #intoAll(Collection)}.
   *
   * @param children the children (the collection is copied)
   */
  public Diffuser(Collection<Diffuser<A>> children) {
    this(fanOut(copy(children), true));
  }

  /**
   * A diffuser that runs {@code children}, in order, on the first value and whenever the
   * value is not equal to the previous one: the same as {@link #intoAll(Diffuser[])}.
   *
   * <p>If there are at least two children and every one is a map, the transforms of the
   * maps are called together, in order, before the first child runs: see
   * {@link #intoAll(Collection)}.
   *
   * @param children the children (the array is copied)
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public Diffuser(Diffuser<A>... children) {
    this(fanOut(copy(children), true));
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
      Native.diffuserRun(handle(), newValue);
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
    return new Diffuser<>(Native.diffuserIntoAlways(Objects.requireNonNull(effect, "effect")));
  }

  /**
   * A diffuser that runs every child, in order, on every value (no gate of its own).
   * Not in the reference Java API; mirrors Swift's {@code intoAlways(children)}.
   *
   * <p>If there are at least two children and every one is a map, the transforms of the
   * maps are called together, in order, before the first child runs: see
   * {@link #intoAll(Collection)}.
   *
   * @param children the children (the collection is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoAlways(Collection<Diffuser<A>> children) {
    return new Diffuser<>(fanOut(copy(children), false));
  }

  /**
   * A diffuser that runs every child, in order, on every value (no gate of its own).
   * Not in the reference Java API; mirrors Swift's {@code intoAlways(children...)}.
   *
   * <p>If there are at least two children and every one is a map, the transforms of the
   * maps are called together, in order, before the first child runs: see
   * {@link #intoAll(Collection)}.
   *
   * @param children the children (the array is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public static <A> Diffuser<A> intoAlways(Diffuser<A>... children) {
    return new Diffuser<>(fanOut(copy(children), false));
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
      return new Diffuser<>(Native.diffuserIntoWhen(didChange, diffuser.handle()));
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
        Objects.requireNonNull(didChange, "didChange"), Objects.requireNonNull(effect, "effect")));
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
    return new Diffuser<>(Native.diffuserInto(Objects.requireNonNull(effect, "effect")));
  }

  /**
   * A diffuser that runs {@code effect} on the first value only.
   *
   * @param effect the effect
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoOnce(Effect<A> effect) {
    return new Diffuser<>(Native.diffuserIntoOnce(Objects.requireNonNull(effect, "effect")));
  }

  /**
   * A diffuser that runs every child, in order, on the first value and whenever the
   * value is not equal to the previous one.
   *
   * <p><b>Fan-outs of maps.</b> If there are at least two children and every one is a
   * {@link #map(Function, Diffuser) map}, the transforms of the maps are called together,
   * in order, before the first child runs (instead of each just before its child): one
   * call from the native core into Java per run instead of one per map. If transform
   * {@code k} throws, no later transform is called, the children before {@code k} still
   * run, in order, and none after; then the exception reaches the caller of {@code run}
   * (it does even if one of those children throws too: it was thrown first).
   *
   * <p>In the same call, each part that goes to a gate ({@link #into(Effect)} or
   * {@code intoAll}) used nowhere else under this fan-out is compared with that gate's
   * previous value, as the gate would ({@code Objects.equals(previous, part)}), right after
   * its transform: an equal part is then not passed at all, and a different one is not
   * compared again. So those {@code equals} calls too happen before the first child runs.
   * If such an {@code equals} throws, the gate compares the part again at its turn, and
   * that failure aborts the run there, as it would without the early comparison.
   *
   * @param children the children (the collection is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  public static <A> Diffuser<A> intoAll(Collection<Diffuser<A>> children) {
    return new Diffuser<>(fanOut(copy(children), true));
  }

  /**
   * A diffuser that runs every child, in order, on the first value and whenever the
   * value is not equal to the previous one.
   *
   * <p>If there are at least two children and every one is a map, the transforms of the
   * maps are called together, in order, before the first child runs: see
   * {@link #intoAll(Collection)}.
   *
   * @param children the children (the array is copied)
   * @param <A> the value type
   * @return the diffuser
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public static <A> Diffuser<A> intoAll(Diffuser<A>... children) {
    return new Diffuser<>(fanOut(copy(children), true));
  }

  /**
   * A diffuser that feeds {@code diffuser} the part of each value that {@code transform}
   * selects.
   *
   * <p>In a fan-out whose children are all maps ({@link #intoAll(Collection)},
   * {@link #intoAlways(Collection)} and their other forms), the transforms of the maps are
   * called together, in order, before the first child runs.
   *
   * <p>The native node of the map is made the first time it is needed (when it is run, or
   * composed into anything but a fan-out of maps), so a failure to make it (running out of
   * native memory) is reported there.
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
    return new Diffuser<>(0, transform, diffuser);
  }

  /** {@code Diffuser[<native node>]}, or {@code Diffuser[map]} for a map that has none yet. */
  @Override
  public String toString() {
    long made = handle;
    return made != 0 ? "Diffuser[" + Long.toHexString(made) + "]" : "Diffuser[map]";
  }

  private static Diffuser<?>[] copy(Collection<? extends Diffuser<?>> children) {
    return Objects.requireNonNull(children, "children").toArray(new Diffuser<?>[0]);
  }

  private static Diffuser<?>[] copy(Diffuser<?>[] children) {
    return Objects.requireNonNull(children, "children").clone();
  }

  /**
   * The handle of a new fan-out (gated: intoAll) over a private copy of the children.
   *
   * <p>When there are at least two children and every one is a map, the fan-out is built
   * as one node over the maps' own children that selects all the parts with one call of
   * the native core into Java per run, instead of one per map (an upcall costs far more
   * than a typical transform): {@code mapAll}, wrapped in {@code intoAll} for the gated
   * form. The core defines that node as the ungated fan-out of the same maps, except that
   * the transforms are called together before the first child runs, and a child shares
   * its cache wherever it is used, so the only visible difference is when the transforms
   * (and the comparisons the node lets the selection make, see {@code MapAll}) are
   * called. Any other fan-out is built as it is.
   */
  private static long fanOut(Diffuser<?>[] children, boolean gated) {
    boolean allMaps = children.length >= 2;
    for (int i = 0; i < children.length; i++) {
      // The message is built only when it is needed: composing must not allocate per child.
      if (children[i] == null) throw new NullPointerException("children[" + i + "]");
      allMaps &= children[i].transform != null;
    }
    try {
      if (allMaps) return mapAll(children, gated);
      long[] handles = new long[children.length];
      for (int i = 0; i < children.length; i++) handles[i] = children[i].handle();
      return gated ? Native.diffuserIntoAll(handles) : Native.diffuserIntoAlwaysAll(handles);
    } finally {
      Reference.reachabilityFence(children);
    }
  }

  /**
   * The handle of a fan-out of maps as one {@code mapAll} node over the maps' children
   * (the caller keeps {@code maps}, and so their children, reachable). The gated form is
   * {@code intoAll([mapAll])}, which retains the inner node, so its handle is released at
   * once.
   */
  private static long mapAll(Diffuser<?>[] maps, boolean gated) {
    Function<?, ?>[] transforms = new Function<?, ?>[maps.length];
    long[] children = new long[maps.length];
    for (int i = 0; i < maps.length; i++) {
      transforms[i] = maps[i].transform;
      children[i] = maps[i].mapped.handle();
    }
    long all = Native.diffuserMapAll(transforms, children);
    if (!gated) return all;
    try {
      return Native.diffuserIntoAll(new long[] {all});
    } finally {
      Native.diffuserRelease(all);
    }
  }
}
