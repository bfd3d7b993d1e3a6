package io.diffuser.internal;

import io.diffuser.Effect;
import io.diffuser.Function;
import io.diffuser.diffuser.DidChange;
import io.diffuser.fuser.Source;
import java.lang.ref.Cleaner;

/**
 * The native methods of the binding: one per function of the C ABI ({@code diffuser.h})
 * that the Java classes use, implemented by {@code libdiffuser_jni.so}. Handles are the
 * C handles as {@code long}. Values are Java objects, compared with
 * {@link java.util.Objects#equals}.
 *
 * <p>Failures: a {@code DFS_ERR_CALLBACK} status rethrows the exception a user callback
 * threw (the same object); other statuses throw {@link IllegalStateException},
 * {@link NullPointerException}, {@link IllegalArgumentException} or
 * {@link OutOfMemoryError} with the library's message.
 *
 * <p>Not API.
 */
public final class Native {
  static {
    NativeLoader.load();
  }

  /** Releases native handles of unreachable Java objects. */
  private static final Cleaner CLEANER = Cleaner.create();

  private Native() {}

  /** Kinds of handles, for {@link #track}. */
  public enum Kind {
    /** A {@code dfs_diffuser}. */
    DIFFUSER,
    /** A {@code dfs_fuser}. */
    FUSER,
    /** A {@code dfs_disposable}. */
    DISPOSABLE
  }

  /**
   * Releases {@code handle} once {@code owner} has become unreachable. Only the handle
   * is released; the core keeps alive whatever it still needs (children of composed
   * nodes, live connections).
   *
   * @param owner the Java object that owns the handle
   * @param kind the kind of handle
   * @param handle the handle
   * @return the registration, whose {@code clean()} releases the handle at once
   */
  public static Cleaner.Cleanable track(Object owner, Kind kind, long handle) {
    return CLEANER.register(owner, new Release(kind, handle));
  }

  /** A cleaning action; must not refer to the owner. */
  private static final class Release implements Runnable {
    private final Kind kind;
    private final long handle;

    Release(Kind kind, long handle) {
      this.kind = kind;
      this.handle = handle;
    }

    @Override
    public void run() {
      switch (kind) {
        case DIFFUSER:
          diffuserRelease(handle);
          break;
        case FUSER:
          fuserRelease(handle);
          break;
        default:
          disposableRelease(handle);
          break;
      }
    }
  }

  /**
   * {@code dfs_diffuser_into_always}.
   *
   * @param effect the effect
   * @return the new diffuser handle
   */
  public static native long diffuserIntoAlways(Effect<?> effect);

  /**
   * {@code dfs_diffuser_into}.
   *
   * @param effect the effect
   * @return the new diffuser handle
   */
  public static native long diffuserInto(Effect<?> effect);

  /**
   * {@code dfs_diffuser_into_once}.
   *
   * @param effect the effect
   * @return the new diffuser handle
   */
  public static native long diffuserIntoOnce(Effect<?> effect);

  /**
   * {@code dfs_diffuser_into_when}.
   *
   * @param didChange the predicate
   * @param child the child diffuser handle
   * @return the new diffuser handle
   */
  public static native long diffuserIntoWhen(DidChange<?> didChange, long child);

  /**
   * {@code dfs_diffuser_into_when_effect}.
   *
   * @param didChange the predicate
   * @param effect the effect
   * @return the new diffuser handle
   */
  public static native long diffuserIntoWhenEffect(DidChange<?> didChange, Effect<?> effect);

  /**
   * {@code dfs_diffuser_into_all}.
   *
   * @param children the child diffuser handles (copied)
   * @return the new diffuser handle
   */
  public static native long diffuserIntoAll(long[] children);

  /**
   * {@code dfs_diffuser_into_always_all}.
   *
   * @param children the child diffuser handles (copied)
   * @return the new diffuser handle
   */
  public static native long diffuserIntoAlwaysAll(long[] children);

  /**
   * {@code dfs_diffuser_map_borrowed}: the transform's results are lent to the core for
   * the run (JNI local references), and retained only by a gate that caches one.
   *
   * @param transform the transform
   * @param child the child diffuser handle
   * @return the new diffuser handle
   */
  public static native long diffuserMap(Function<?, ?> transform, long child);

  /**
   * {@code dfs_diffuser_run}.
   *
   * @param diffuser the diffuser handle
   * @param value the value
   * @param owner the Java diffuser of the handle: a run asked for from inside another
   *     run's effect may be queued, and the owner, which holds what the nodes call, is
   *     then kept reachable until the queued run is done
   */
  public static native void diffuserRun(long diffuser, Object value, Object owner);

  /**
   * Called from inside a native method of this thread (from a callback), keeps
   * {@code object} reachable until the outermost native method of the thread returns;
   * otherwise does nothing. For objects the core may still call until then, after the
   * Java side let go of them: the fuser of a loop connection disposed from inside its
   * own delivery, whose sources are disconnected once that delivery ends.
   *
   * @param handle the handle of {@code object} (each object is kept once)
   * @param object what to keep
   */
  public static native void keepUntilReturn(long handle, Object object);

  /**
   * {@code dfs_diffuser_release}.
   *
   * @param diffuser the diffuser handle
   */
  public static native void diffuserRelease(long diffuser);

  /**
   * {@code dfs_fuser_from} with a Java source.
   *
   * @param source the source
   * @return the new fuser handle
   */
  public static native long fuserFrom(Source<?> source);

  /**
   * {@code dfs_fuser_from_all}.
   *
   * @param children the child fuser handles (copied)
   * @return the new fuser handle
   */
  public static native long fuserFromAll(long[] children);

  /**
   * {@code dfs_fuser_extract}.
   *
   * @param transform the transform
   * @param child the child fuser handle
   * @return the new fuser handle
   */
  public static native long fuserExtract(Function<?, ?> transform, long child);

  /**
   * {@code dfs_fuser_extract_constant}.
   *
   * @param constant the constant (may be null)
   * @param child the child fuser handle
   * @return the new fuser handle
   */
  public static native long fuserExtractConstant(Object constant, long child);

  /**
   * {@code dfs_fuser_extract_unless_null}.
   *
   * @param transform the transform
   * @param child the child fuser handle
   * @return the new fuser handle
   */
  public static native long fuserExtractUnlessNull(Function<?, ?> transform, long child);

  /**
   * {@code dfs_fuser_connect}.
   *
   * @param fuser the fuser handle
   * @param effect the effect
   * @return the new disposable handle
   */
  public static native long fuserConnect(long fuser, Effect<?> effect);

  /**
   * {@code dfs_fuser_release}.
   *
   * @param fuser the fuser handle
   */
  public static native void fuserRelease(long fuser);

  /**
   * {@code dfs_disposable_dispose}; rethrows the first exception a source's
   * {@code Disposable.dispose()} threw while disconnecting (a loop registration disposed
   * while its sources connect on the loop's turn may return before they are
   * disconnected: the turn then disconnects them, and their exceptions go where the call
   * running it sends them).
   *
   * @param disposable the disposable handle
   */
  public static native void disposableDispose(long disposable);

  /**
   * {@code dfs_disposable_release}.
   *
   * @param disposable the disposable handle
   */
  public static native void disposableRelease(long disposable);

  /**
   * {@code dfs_dispatch_emit}; a dispatch whose connection ended drops the event.
   *
   * @param dispatch the dispatch handle
   * @param event the event
   */
  public static native void dispatchEmit(long dispatch, Object event);

  /**
   * {@code dfs_version}.
   *
   * @return the native library's version
   */
  public static native String version();

  /**
   * {@code dfs_abi_version}.
   *
   * @return the native library's ABI version
   */
  public static native int abiVersion();

  /**
   * The bytes the C library's allocator has handed out and not taken back (glibc's
   * {@code mallinfo2().uordblks}): a diagnostic, for the benchmark's native bytes per
   * leaf; it reads a counter and changes nothing. Covers the core, the JNI glue and the JVM's own
   * native allocations (global references among them).
   *
   * @return the bytes in use, or 0 where the C library cannot say
   */
  public static native long heapInUse();

  /**
   * The {@code dfs_type} handle of Java objects (for native tests and tools).
   *
   * @return the value type handle
   */
  public static native long valueType();

  /**
   * Where the native libraries were loaded from.
   *
   * @return {@code "jar"} or {@code "java.library.path"}
   */
  public static String loadedFrom() {
    return NativeLoader.loadedFrom();
  }
}
