package io.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.Test;

/**
 * Native handles are released when their Java objects become unreachable, and disposing a
 * connection frees it: creating and dropping many trees does not grow the process.
 */
public class MemoryTest {
  private static final int TREES = 200_000;
  private static final long LIMIT = 64L << 20;

  private static long sink;

  /** VmRSS of this process, in bytes. */
  static long rss() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"), StandardCharsets.UTF_8)) {
      if (line.startsWith("VmRSS:")) {
        String[] parts = line.trim().split("\\s+");
        return Long.parseLong(parts[1]) * 1024;
      }
    }
    throw new IOException("no VmRSS");
  }

  private static void collect() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(10);
    }
  }

  /** A source that emits one event when connected. */
  private static final Source<String> ONE_EVENT = effect -> {
    effect.run("hello");
    return () -> sink++;
  };

  private static void diffuserTree(int i) {
    Diffuser<String> d = Diffuser.intoAll(
        Diffuser.map((String s) -> s.length(), Diffuser.into(n -> sink += n)),
        Diffuser.intoWhen((String a, String b) -> !a.equals(b), Diffuser.intoOnce(s -> sink++)),
        Diffuser.intoWhen((String a, String b) -> true, (String s) -> sink--),
        new Diffuser<>(Diffuser.intoAlways(s -> sink++)));
    d.run("value " + i);
    d.run("value " + (i + 1));
  }

  private static void fuserTree(int i) {
    Fuser<Object> f = Fuser.fromAll(
        Fuser.extract((String s) -> s + "!", Fuser.from(ONE_EVENT)),
        Fuser.extractConstant(i, Fuser.from(ONE_EVENT)),
        Fuser.extractUnlessNull((String s) -> null, Fuser.from(ONE_EVENT)));
    Disposable connection = f.connect(v -> sink++);
    connection.dispose();
  }

  private static void churn(int count) throws InterruptedException {
    for (int i = 0; i < count; i++) {
      diffuserTree(i);
      fuserTree(i);
      if (i % 20_000 == 19_999) {
        collect();
      }
    }
    collect();
  }

  @Test
  public void droppedTreesAreFreed() throws Exception {
    churn(60_000); // warm up until RSS plateaus: JIT, handle table, malloc arenas
    long before = rss();
    churn(TREES);
    long after = rss();
    long growth = after - before;
    System.out.printf("MemoryTest: %d Diffuser and Fuser trees, VmRSS %d MiB -> %d MiB (growth %d KiB)%n",
        TREES, before >> 20, after >> 20, growth >> 10);
    assertTrue("VmRSS grew by " + (growth >> 20) + " MiB", growth < LIMIT);
    assertEquals(true, sink != 0);
  }
}
