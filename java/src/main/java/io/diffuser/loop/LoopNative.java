package io.diffuser.loop;

import io.diffuser.internal.Native;
import java.lang.ref.Cleaner;

/**
 * The native methods of the loops: one per function of the "Loops" section of the C ABI
 * ({@code diffuser.h}) that the classes of this package use, implemented by
 * {@code loop_jni.c} in {@code libdiffuser_jni.so}. Handles are the C handles as
 * {@code long}; values are Java objects, compared with {@link java.util.Objects#equals}.
 *
 * <p>Statuses: {@link #dispatch} and {@link #jobSend} return {@link #OK},
 * {@link #STOPPED} or {@link #DISPOSED}; other failures throw as the other native
 * methods of the binding do ({@link IllegalStateException} and the like).
 */
final class LoopNative {
  static {
    // io.diffuser.internal.Native loads the libraries.
    Native.abiVersion();
    load();
    loadJobs();
    loadGears();
  }

  /** {@code DFS_OK}. */
  static final int OK = 0;
  /** {@code DFS_ERR_STOPPED}. */
  static final int STOPPED = 7;
  /** {@code DFS_ERR_DISPOSED}. */
  static final int DISPOSED = 8;

  private static final Cleaner CLEANER = Cleaner.create();

  private LoopNative() {}

  /** Does nothing but make sure this class (and so the glue) is initialized. */
  static void ensureLoaded() {}

  /** Kinds of loop handles, for {@link #track}. */
  enum Kind {
    LOOP, JOB, EXECUTOR, GEAR
  }

  /** Releases {@code handle} once {@code owner} is unreachable. */
  static Cleaner.Cleanable track(Object owner, Kind kind, long handle) {
    return CLEANER.register(owner, new Release(kind, handle));
  }

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
        case LOOP:
          try {
            release(handle);
          } catch (Throwable failure) {
            // What a source's dispose() threw as the release disposed a loop collected
            // while it ran: the Cleaner would drop it, and nobody else can catch it.
            Bridges.uncaught(failure);
          }
          break;
        case JOB:
          jobRelease(handle);
          break;
        case GEAR:
          gearRelease(handle);
          break;
        default:
          executorRelease(handle);
          break;
      }
    }
  }

  /** Resolves the classes and methods the glue calls. */
  private static native void load();

  static native long loopNew(Object model, Object[] startEffects, Object update, Object[] handlers,
                             long[] handlerExecutors, long executor, Object coalesce, Object restart,
                             Object inspector, long journal, long[] feedbacks, boolean manualStart);

  static native int dispatch(long loop, Object event);

  static native Object model(long loop);

  static native long observe(long loop, Object observer);

  static native long connect(long loop, long fuser);

  static native long feedbackWork(int overlap, long executor, Object work);

  static native long feedbackRequest(Object request, int overlap, long executor, Object work);

  static native long add(long loop, long feedback);

  static native void feedbackRelease(long feedback);

  static native boolean start(long loop);

  static native void stop(long loop);

  static native void dispose(long loop);

  static native boolean isRunning(long loop);

  static native void release(long loop);

  static native int jobSend(long job, Object event);

  static native void jobFinish(long job);

  static native void jobCancel(long job);

  static native boolean jobIsCancelled(long job);

  static native void jobOnCancel(long job, Runnable action);

  static native void jobRetain(long job);

  static native void jobRelease(long job);

  static native long executorNew(Object bridge, int stepsPerRun);

  static native void executorRelease(long executor);

  static native void workRun(long work);

  static native void setError(String message);

  /**
   * Keeps {@code failure} (a {@link Bridges.Failure}) for the inspector's trace of it,
   * which follows on the same native thread, in place of the one kept so far.
   */
  static native void keepFailure(Object failure);

  /** Resolves what the job and executor glue calls. */
  private static native void loadJobs();

  /** Resolves what the gear glue calls. */
  private static native void loadGears();

  static native long gearNew();

  static native void gearSend(long gear, Object event);

  static native void gearRelease(long gear);

  static native long feedbackPushing(long gear, Object bridge);

  static native long feedbackAttached(long gear, Object bridge);
}
