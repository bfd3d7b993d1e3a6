package io.diffuser.fuser;

import io.diffuser.Effect;
import io.diffuser.Function;
import io.diffuser.internal.Handles;
import io.diffuser.internal.Native;
import java.lang.ref.Reference;
import java.util.Collection;
import java.util.Objects;

/**
 * Gathers events from many sources into one stream.
 *
 * <p>A fuser is a description: building one connects nothing. {@link #connect(Effect)}
 * connects every source of the description to an effect and returns a
 * {@link Disposable} that disconnects them all.
 *
 * <pre>{@code
 * Fuser<LoginEvent> fuser = new Fuser<>(
 *     Fuser.extract(UsernameChanged::new, Fuser.from(usernameField)),
 *     Fuser.extractConstant(LoginClicked.INSTANCE, Fuser.from(loginButton)));
 * Disposable connection = fuser.connect(event -> System.out.println(event));
 * // ...
 * connection.dispose();
 * }</pre>
 *
 * <p>To feed a loop, connect the fuser to it with {@code loop.connect(fuser)}: the loop
 * then runs its steps once the connection has delivered each event, not inside the
 * effect.
 *
 * <p>A {@code Fuser} is a handle to a node of the native Diffuser core, which does the
 * dispatching: the Swift and C APIs share it.
 *
 * <p><b>Threads.</b> Sources may emit on any thread, including threads the JVM did not
 * start. Each connection delivers one event at a time, on the emitting thread: an event's
 * transforms ({@link #extract}, {@link #extractUnlessNull}) and the effect run under the
 * connection's lock (except that an event a transform or the effect causes on the same
 * thread, emitting into a source of its own connection, is delivered at once, nested in
 * the delivery in progress), and once its {@code dispose()} has returned neither its
 * transforms nor its effect run again, even when the effect itself called it. Events a
 * source emits before it is connected or after its connection was disposed are dropped.
 * So a transform or an effect that waits for another thread (a {@code loop.dispatch} that
 * runs the loop's steps, one of which waits for a callback on another thread) makes that
 * thread wait too if it emits into the same connection.
 *
 * <p><b>Depth.</b> A fuser nests at most {@link #MAX_DEPTH} combinators from itself down
 * to a source; composing a deeper one throws {@link IllegalArgumentException}. Width is
 * not limited.
 *
 * <p><b>Failures.</b> An exception thrown by the connected {@link Effect} or by a
 * {@link Function} of {@link #extract} or {@link #extractUnlessNull} reaches the source
 * that emitted the event (it is thrown by the source's {@code effect.run(event)}) as the
 * same object; the connection stays usable. An exception thrown by
 * {@link Source#connect} reaches the caller of {@link #connect(Effect)} unchanged, after
 * the sources already connected were disconnected. Events are delivered as they are
 * emitted, also while the sources connect: those emitted before a source failed have
 * reached the effect.
 *
 * <p><b>Memory.</b> A fuser holds its sources and transforms and the fusers it was made
 * from; the native node holds them only weakly and is released when this object becomes
 * unreachable. So a fuser whose sources capture the object that holds it is collected
 * with that object. A connection holds its fuser until it is disposed (a dropped
 * connection stays connected).
 *
 * @param <A> the type of events
 */
public final class Fuser<A> {
  /**
   * The most combinators a path from a fuser down to a source may pass through, the fuser
   * and the source included ({@link #from(Source) from} is 1 deep, an {@link
   * #extract(Function, Fuser) extract} over it 2). An event climbs from its source through
   * each fuser around it by calls on the emitting thread's stack, and the native core
   * releases a fuser the same way; this bound keeps that within about 100 KB of the
   * thread's stack. The C API's {@code DFS_MAX_DEPTH}, the same as {@code
   * Diffuser.MAX_DEPTH}.
   */
  public static final int MAX_DEPTH = 200;

  static {
    Handles.registerFuser(fuser -> ((Fuser<?>) fuser).handle);
  }

  private final long handle;

  /**
   * What the native node calls and the fusers it was made from: the node holds its user
   * objects by weak references, so that this object, and whatever holds it (a
   * connection, while it is connected), decides when they can be collected. Never read.
   */
  @SuppressWarnings("unused")
  private final Object held;

  private Fuser(long handle, Object held) {
    this.handle = handle;
    this.held = held;
    Native.track(this, Native.Kind.FUSER, handle);
  }

  /**
   * A fuser of {@code children}, a copy of the caller's: typed {@code Object[]} only so that
   * it differs from the public constructor's erasure.
   */
  private Fuser(Object[] children) {
    this(merge((Fuser<?>[]) children), children);
  }

  /**
   * A fuser that merges the events of {@code children}: the same as
   * {@link #fromAll(Fuser[])}.
   *
   * @param children the children (the array is copied)
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public Fuser(Fuser<? extends A>... children) {
    this((Object[]) copy(children));
  }

  /**
   * A fuser that merges the events of {@code children}: the same as
   * {@link #fromAll(Collection)}.
   *
   * @param children the children (the collection is copied)
   */
  public Fuser(Collection<Fuser<? extends A>> children) {
    this((Object[]) copy(children));
  }

  /**
   * A fuser whose events come from {@code source}. Each {@link #connect} of a fuser
   * containing it calls {@code source.connect} once, and disposing that connection
   * disposes what {@code source.connect} returned.
   *
   * @param source the source
   * @param <A> the type of events
   * @return the fuser
   */
  public static <A> Fuser<A> from(Source<? extends A> source) {
    return new Fuser<>(Native.fuserFrom(Objects.requireNonNull(source, "source")), source);
  }

  /**
   * A fuser that merges the events of {@code children}, in the order they arrive.
   *
   * @param children the children (the collection is copied)
   * @param <A> the type of events
   * @return the fuser
   */
  public static <A> Fuser<A> fromAll(Collection<Fuser<A>> children) {
    return new Fuser<A>((Object[]) copy(children));
  }

  /**
   * A fuser that merges the events of {@code children}, in the order they arrive.
   *
   * @param children the children (the array is copied)
   * @param <A> the type of events
   * @return the fuser
   */
  @SafeVarargs
  @SuppressWarnings("varargs") // the array is only copied
  public static <A> Fuser<A> fromAll(Fuser<? extends A>... children) {
    return new Fuser<A>((Object[]) copy(children));
  }

  /**
   * A fuser that turns each event of {@code fuser} into {@code transformation(event)}.
   *
   * @param transformation converts an event
   * @param fuser the child
   * @param <A> the child's type of events
   * @param <B> the type of events
   * @return the fuser
   */
  public static <A, B> Fuser<B> extract(Function<A, B> transformation, Fuser<A> fuser) {
    Objects.requireNonNull(transformation, "transformation");
    Objects.requireNonNull(fuser, "fuser");
    try {
      return new Fuser<>(Native.fuserExtract(transformation, fuser.handle), new Object[] {transformation, fuser});
    } finally {
      Reference.reachabilityFence(fuser);
    }
  }

  /**
   * A fuser that emits {@code constant} for each event of {@code fuser}: clicks, for
   * instance.
   *
   * <p>The native core keeps {@code constant} as a value, by a strong global reference,
   * for as long as the fuser, a fuser made from it or one of their connections lives: a
   * constant that reaches the object holding the fuser keeps both from being collected.
   * For such an event, use {@link #extract} with a function that returns it.
   *
   * @param constant the event to emit (may be {@code null})
   * @param fuser the child
   * @param <A> the child's type of events
   * @param <B> the type of events
   * @return the fuser
   */
  public static <A, B> Fuser<B> extractConstant(B constant, Fuser<A> fuser) {
    Objects.requireNonNull(fuser, "fuser");
    try {
      return new Fuser<>(Native.fuserExtractConstant(constant, fuser.handle), fuser);
    } finally {
      Reference.reachabilityFence(fuser);
    }
  }

  /**
   * A fuser that turns each event of {@code fuser} into {@code transformation(event)} and
   * drops those that become {@code null}.
   *
   * @param transformation converts an event; returns {@code null} to drop it
   * @param fuser the child
   * @param <A> the child's type of events
   * @param <B> the type of events
   * @return the fuser
   */
  public static <A, B> Fuser<B> extractUnlessNull(Function<A, B> transformation, Fuser<A> fuser) {
    Objects.requireNonNull(transformation, "transformation");
    Objects.requireNonNull(fuser, "fuser");
    try {
      return new Fuser<>(Native.fuserExtractUnlessNull(transformation, fuser.handle), new Object[] {transformation, fuser});
    } finally {
      Reference.reachabilityFence(fuser);
    }
  }

  /**
   * Connects every source to {@code effect}: events start flowing.
   *
   * <p>Keep the returned {@link Disposable}: the connection lives until its
   * {@code dispose()} is called. Dropping it without disposing leaves the sources
   * connected for good, as in the reference Java library. {@code dispose()} is idempotent
   * and disposes every source connection made here; after it returns, {@code effect}
   * receives nothing more and the connection's native resources and references to
   * {@code effect} and to the sources' disposables are released. An exception thrown by a
   * source's {@link Disposable#dispose()} is rethrown by {@code dispose()} after every
   * source was disconnected. A {@code dispose()} made while another is under way on
   * another thread returns once neither {@code effect} nor a transform can be called; the
   * sources' disconnects may then still be running on that thread.
   *
   * <p>The transforms of {@link #extract} and {@link #extractUnlessNull} run on the
   * emitting thread as part of the connection's delivery, under its lock: never at the
   * same time as each other or {@code effect}, and never after {@code dispose()} returned.
   *
   * <p>Called from inside {@code effect}, {@code dispose()} returns without waiting for
   * the sources: {@code effect} receives nothing more, and the sources are disconnected
   * right after {@code effect} returns, before the emission that called it returns, on
   * that emission's thread. The connection is not locked then, so a source whose dispose
   * stops and joins a thread of its own that is waiting to deliver an event cannot
   * deadlock; but a dispose that joins the thread it is called on never returns. An
   * exception a source's {@code dispose()} throws then reaches the emitter of that event,
   * as {@code effect}'s own would.
   *
   * @param effect receives the events, one at a time per connection
   * @return what disconnects the sources
   * @throws RuntimeException (or Error) the exception a {@link Source#connect} threw,
   *     unchanged (nothing stays connected then); {@link NullPointerException} if a
   *     source returned a {@code null} disposable
   */
  public Disposable connect(Effect<A> effect) {
    Objects.requireNonNull(effect, "effect");
    try {
      return new Connection(Native.fuserConnect(handle, new Delivery<>(effect, this)));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public String toString() {
    return "Fuser[" + Long.toHexString(handle) + "]";
  }

  /** The Java face of a {@code dfs_disposable}. */
  /**
   * The effect of a connection, holding the fuser it connects: the core holds the effect
   * for as long as the connection is connected (a dropped connection stays connected),
   * and so, through it, the user objects of the fuser's nodes.
   */
  private static final class Delivery<A> implements Effect<A> {
    private final Effect<A> effect;
    @SuppressWarnings("unused")
    private final Fuser<?> fuser;

    Delivery(Effect<A> effect, Fuser<?> fuser) {
      this.effect = effect;
      this.fuser = fuser;
    }

    @Override
    public void run(A value) {
      effect.run(value);
    }
  }

  private static final class Connection implements Disposable {
    private final long handle;

    Connection(long handle) {
      this.handle = handle;
      Native.track(this, Native.Kind.DISPOSABLE, handle);
    }

    @Override
    public void dispose() {
      try {
        Native.disposableDispose(handle);
      } finally {
        Reference.reachabilityFence(this);
      }
    }

    @Override
    public String toString() {
      return "Disposable[" + Long.toHexString(handle) + "]";
    }
  }

  private static Fuser<?>[] copy(Collection<? extends Fuser<?>> children) {
    return Objects.requireNonNull(children, "children").toArray(new Fuser<?>[0]);
  }

  private static Fuser<?>[] copy(Fuser<?>[] children) {
    return Objects.requireNonNull(children, "children").clone();
  }

  /** The handle of a new merge over a private copy of the children. */
  private static long merge(Fuser<?>[] children) {
    long[] handles = new long[children.length];
    for (int i = 0; i < children.length; i++) {
      Fuser<?> child = children[i];
      // The message is built only when it is needed: composing must not allocate per child.
      if (child == null) throw new NullPointerException("children[" + i + "]");
      handles[i] = child.handle;
    }
    try {
      return Native.fuserFromAll(handles);
    } finally {
      Reference.reachabilityFence(children);
    }
  }
}
