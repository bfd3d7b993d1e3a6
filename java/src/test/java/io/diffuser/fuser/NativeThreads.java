package io.diffuser.fuser;

import io.diffuser.Effect;

/** The native test helpers (libdiffuser_jni_test.so, from java/src/test/c). */
final class NativeThreads {
  static {
    new Fuser<Object>(); // loads libdiffuser.so and the glue first
    System.load(System.getProperty("diffuser.testLibrary"));
  }

  private NativeThreads() {}

  /**
   * Emits {@code events} through the dispatch that {@code effect} (the effect a source
   * received in connect) wraps, from a new pthread the JVM did not start, and waits for
   * it. Returns the dfs_status of each emission, then 1 if the thread ended detached.
   */
  static native int[] emitOnNativeThread(Effect<?> effect, Object[] events);
}
