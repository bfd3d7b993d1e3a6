package io.diffuser;

import io.diffuser.diffuser.Diffuser;

/** The native heap of the process, from the native test helpers (libdiffuser_jni_test.so). */
final class NativeHeap {
  static {
    Diffuser.intoAlways((Object o) -> { }); // loads libdiffuser.so and the glue first
    System.load(System.getProperty("diffuser.testLibrary"));
  }

  private NativeHeap() {}

  /**
   * The bytes malloc has handed out and not taken back, over every arena (glibc's
   * {@code mallinfo2()}: {@code uordblks + hblkhd}).
   */
  static native long inUse();
}
