package io.diffuser.list;

import io.diffuser.diffuser.Diffuser;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;

/**
 * The program {@link IntoListTest#firstUseOfTheBindingThroughIntoList} runs in a fresh JVM:
 * the binding's first class is {@code ListNative}, whose loading of the native libraries
 * initializes {@code Native} on the way. Prints how many copies of the glue are mapped and
 * whether a sink's exception reaches {@code run} unchanged.
 */
public final class IntoListFirstUse {
  private IntoListFirstUse() {}

  /**
   * Runs an intoList node whose sink throws.
   *
   * @param args ignored
   * @throws Exception if /proc/self/maps cannot be read
   */
  public static void main(String[] args) throws Exception {
    RuntimeException failure = new RuntimeException("sink");
    Diffuser<List<String>> diffuser = Diffuser.intoList((String s) -> s, (changes, list) -> {
      throw failure;
    });
    String outcome;
    try {
      diffuser.run(Arrays.asList("a", "b"));
      outcome = "no exception";
    } catch (RuntimeException thrown) {
      outcome = thrown == failure ? "the same exception" : "another exception: " + thrown;
    }
    long glue = Files.readAllLines(Paths.get("/proc/self/maps")).stream()
        .filter(line -> line.endsWith("libdiffuser_jni.so") || line.endsWith("libdiffuser_jni.so (deleted)"))
        .map(line -> line.substring(line.lastIndexOf(' ', line.indexOf("libdiffuser_jni.so")) + 1))
        .distinct().count();
    System.out.println("glue copies " + glue);
    System.out.println(outcome);
  }
}
