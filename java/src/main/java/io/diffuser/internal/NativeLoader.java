package io.diffuser.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the native libraries: {@code libdiffuser.so} (the core) first, then
 * {@code libdiffuser_jni.so} (the glue, which links to the core by its soname).
 *
 * <p>The jar carries both under {@code /native/<os>-<arch>/} (e.g.
 * {@code /native/linux-x86_64/}). They are copied into a new private temporary directory
 * (readable by the owner only), loaded with {@link System#load}, and deleted again: the
 * loaded code stays mapped. If the jar has no libraries for this platform, or loading
 * them fails, the loader falls back to {@link System#loadLibrary} through
 * {@code java.library.path}.
 *
 * <p>Not API.
 */
final class NativeLoader {
  private static final String CORE = "libdiffuser.so";
  private static final String GLUE = "libdiffuser_jni.so";

  private static String loadedFrom;
  /** Whether the jar's core library is loaded (then the fallback must not load another). */
  private static boolean coreFromJar;
  /**
   * Whether a load is in progress on the thread that holds the lock: the glue's
   * {@code JNI_OnLoad} initializes {@code Native}, whose static initializer calls
   * {@link #load()} again on the same thread. Without this, a load started by another
   * class ({@code ListNative}) would load a second copy of both libraries, with their own
   * per-thread state and value type, and natives of one copy would call into the other.
   */
  private static boolean loading;

  private NativeLoader() {}

  /** The resource directory of this platform's libraries, e.g. {@code native/linux-x86_64}. */
  static String platformDirectory() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (os.startsWith("linux")) os = "linux";
    else if (os.startsWith("mac")) os = "macos";
    if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
    else if (arch.equals("arm64")) arch = "aarch64";
    return "native/" + os + "-" + arch;
  }

  static synchronized String loadedFrom() {
    return loadedFrom;
  }

  static synchronized void load() {
    if (loadedFrom != null || loading) return;
    loading = true;
    try {
      loadOnce();
    } finally {
      loading = false;
    }
  }

  private static void loadOnce() {
    Throwable fromJar = null;
    try {
      if (loadFromJar()) {
        loadedFrom = "jar";
        return;
      }
    } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
      fromJar = e;
    }
    try {
      if (!coreFromJar) System.loadLibrary("diffuser");
      System.loadLibrary("diffuser_jni");
      loadedFrom = "java.library.path";
    } catch (UnsatisfiedLinkError e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError(
          "Diffuser: cannot load the native libraries: the jar has none for "
              + platformDirectory() + (fromJar == null ? "" : " that load")
              + ", and java.library.path has none either (" + e.getMessage() + ")");
      if (fromJar != null) error.addSuppressed(fromJar);
      throw error;
    }
  }

  /** Extracts and loads the jar's libraries; false if the jar has none for this platform. */
  private static boolean loadFromJar() throws IOException {
    String dir = "/" + platformDirectory() + "/";
    if (NativeLoader.class.getResource(dir + CORE) == null
        || NativeLoader.class.getResource(dir + GLUE) == null) {
      return false;
    }
    Path temp = Files.createTempDirectory("diffuser-native-");
    Path core = temp.resolve(CORE);
    Path glue = temp.resolve(GLUE);
    try {
      extract(dir + CORE, core);
      extract(dir + GLUE, glue);
      System.load(core.toAbsolutePath().toString());
      coreFromJar = true;
      System.load(glue.toAbsolutePath().toString());
      return true;
    } finally {
      // Mapped libraries do not need their files any more.
      Files.deleteIfExists(glue);
      Files.deleteIfExists(core);
      Files.deleteIfExists(temp);
    }
  }

  private static void extract(String resource, Path target) throws IOException {
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
      if (in == null) throw new IOException("missing resource " + resource);
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }
}
