package io.diffuser.loop;

/** The native test helper (libdiffuser_jni_test.so, from java/src/test/c) that reads the core's error text. */
final class NativeErrors {
  static {
    LoopNative.ensureLoaded(); // loads libdiffuser.so and the glue first
    System.load(System.getProperty("diffuser.testLibrary"));
  }

  private NativeErrors() {}

  /** The bytes of {@code dfs_last_error()} on this thread, as the core holds them. */
  static native byte[] lastError();
}
