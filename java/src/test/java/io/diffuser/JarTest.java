package io.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.Test;

/**
 * The built jar carries its native libraries and works on its own, on the class path and
 * on the module path.
 */
public class JarTest {
  private static File jar() {
    File jar = new File(System.getProperty("diffuser.jar"));
    assertTrue("built jar " + jar, jar.isFile());
    return jar;
  }

  @Test
  public void theJarContainsBothLibraries() throws Exception {
    try (JarFile jar = new JarFile(jar())) {
      assertTrue(jar.getEntry("native/linux-x86_64/libdiffuser.so") != null);
      assertTrue(jar.getEntry("native/linux-x86_64/libdiffuser_jni.so") != null);
      assertTrue(jar.getEntry("io/diffuser/diffuser/Diffuser.class") != null);
    }
  }

  @Test
  public void aProgramRunsFromTheJarInAnotherJvm() throws Exception {
    Path emptyLibraryPath = Files.createTempDirectory("diffuser-empty-libpath");
    Path tmp = Files.createTempDirectory("diffuser-child-tmp");
    try {
      String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
      String classpath = jar().getAbsolutePath() + File.pathSeparator + System.getProperty("diffuser.testClasses");
      List<String> command = new ArrayList<>(Arrays.asList(
          java, "-Djava.library.path=" + emptyLibraryPath, "-Djava.io.tmpdir=" + tmp, "-cp", classpath, "io.diffuser.JarSmoke"));
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder.environment().remove("LD_LIBRARY_PATH");
      builder.environment().remove("JAVA_TOOL_OPTIONS");
      Process process = builder.start();
      String output;
      try (InputStream in = process.getInputStream()) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        in.transferTo(bytes);
        output = new String(bytes.toByteArray(), StandardCharsets.UTF_8);
      }
      assertTrue(process.waitFor(60, TimeUnit.SECONDS));
      assertEquals(output, 0, process.exitValue());
      assertTrue(output, output.contains("loaded from jar\n"));
      assertTrue(output, output.contains("version 0.1.0\n"));
      assertTrue(output, output.contains("len 3, len 4, event HI\n"));
      try (java.util.stream.Stream<Path> left = Files.list(tmp)) {
        assertEquals("the extracted libraries are deleted", 0, left.count());
      }
    } finally {
      Files.deleteIfExists(emptyLibraryPath);
      Files.deleteIfExists(tmp);
    }
  }

  @Test
  public void withoutLibrariesInTheJarTheLoaderFallsBackToJavaLibraryPath() throws Exception {
    String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    // Classes only (no resources directory): the libraries must come from java.library.path.
    String classpath = System.getProperty("diffuser.mainClasses") + File.pathSeparator
        + System.getProperty("diffuser.testClasses");
    ProcessBuilder builder = new ProcessBuilder(java, "-Djava.library.path=" + System.getProperty("diffuser.nativeDir"),
        "-cp", classpath, "io.diffuser.JarSmoke").redirectErrorStream(true);
    builder.environment().remove("LD_LIBRARY_PATH");
    Process process = builder.start();
    String output;
    try (InputStream in = process.getInputStream()) {
      output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertTrue(process.waitFor(60, TimeUnit.SECONDS));
    assertEquals(output, 0, process.exitValue());
    assertTrue(output, output.contains("loaded from java.library.path\n"));
    assertTrue(output, output.contains("len 3, len 4, event HI\n"));
  }

  /**
   * On the module path the jar is module {@code io.diffuser}: it exports the API packages
   * only, loads its native libraries from inside itself, and works.
   */
  @Test
  public void onTheModulePathTheJarIsAModuleThatHidesItsInternals() throws Exception {
    Path tmp = Files.createTempDirectory("diffuser-child-tmp");
    try {
      String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
      ProcessBuilder builder = new ProcessBuilder(java, "-Djava.io.tmpdir=" + tmp,
          "--module-path", jar().getAbsolutePath(), "--add-modules", "io.diffuser",
          "-cp", System.getProperty("diffuser.testClasses"), "io.diffuser.modular.ModuleSmoke")
          .redirectErrorStream(true);
      builder.environment().remove("LD_LIBRARY_PATH");
      builder.environment().remove("JAVA_TOOL_OPTIONS");
      Process process = builder.start();
      String output;
      try (InputStream in = process.getInputStream()) {
        output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      assertTrue(process.waitFor(60, TimeUnit.SECONDS));
      assertEquals(output, 0, process.exitValue());
      assertTrue(output, output.contains("module io.diffuser\n"));
      assertTrue(output, output.contains("exports io.diffuser io.diffuser.diffuser io.diffuser.fuser io.diffuser.list io.diffuser.loop\n"));
      assertTrue(output, output.contains("len 3, len 4, event HI, sources left 0\n"));
      assertTrue(output, output.contains("list moves [2, 0], ListScript[move(2, 0)]\n"));
      assertTrue(output, output.contains("internal not reachable\n"));
      try (java.util.stream.Stream<Path> left = Files.list(tmp)) {
        assertEquals("the extracted libraries are deleted", 0, left.count());
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
