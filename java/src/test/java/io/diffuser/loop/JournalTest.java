package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * Journals through the Java binding: recording from the first start (the builder) and
 * from the current model of a running loop ({@link Loop#record}), the entries, replay
 * through the loop's update and through another (effects never handled, failing events
 * skipped), clear and stopping the recording.
 */
public class JournalTest {
  /** Adds the event to the model; "fail" fails; every step makes an effect. */
  static Next<Integer, String> update(Integer model, String event) {
    if (event.equals("fail")) {
      throw new IllegalStateException("refused");
    }
    return Next.next(model + Integer.parseInt(event), "effect " + event);
  }

  static List<String> describe(Journal<Integer, String> journal) {
    return journal.entries().stream().map(Object::toString).collect(java.util.stream.Collectors.toList());
  }

  @Test
  public void recordsFromTheFirstStartAndReplays() {
    Journal<Integer, String> journal = new Journal<>();
    AtomicInteger handled = new AtomicInteger();
    try (Loop<Integer, String, String> loop = Loop.builder(0, JournalTest::update)
        .handler((effect, job) -> handled.incrementAndGet())
        .journal(journal)
        .build()) {
      loop.dispatch("2");
      loop.dispatch("fail");
      loop.dispatch("3");
      loop.stop();
      loop.start();
      loop.dispatch("1");
      assertEquals(Arrays.asList("start 0", "event 2", "event fail", "event 3", "start 5", "event 1"),
          describe(journal));
      Journal.Entry<Integer, String> first = journal.entries().get(0);
      assertTrue(first.isStart());
      assertEquals(Integer.valueOf(0), first.model());
      try {
        first.event();
        fail("a start has no event");
      } catch (IllegalStateException expected) {
        // the entry says what it is
      }
      int before = handled.get();
      AtomicInteger calls = new AtomicInteger();
      List<Integer> models = journal.replay((Integer model, String event) -> {
        calls.incrementAndGet();
        return update(model, event);
      });
      assertEquals(Arrays.asList(0, 2, 5, 5, 6), models);
      assertEquals(4, calls.get());
      assertEquals("a replay handles no effect", before, handled.get());
      List<Integer> doubled = journal.replay((Integer model, String event) -> {
        if (event.equals("fail")) {
          throw new IllegalStateException("refused");
        }
        return Next.next(model + 2 * Integer.parseInt(event));
      });
      assertEquals(Arrays.asList(0, 4, 10, 5, 7), doubled);
    }
  }

  @Test
  public void recordingARunningLoopStartsFromItsModel() {
    Journal<Integer, String> journal = new Journal<>();
    try (Loop<Integer, String, String> loop = Loop.builder(0, JournalTest::update).build()) {
      loop.dispatch("4");
      loop.record(journal);
      loop.dispatch("1");
      assertEquals(Arrays.asList("start 4", "event 1"), describe(journal));
      loop.record(null);
      loop.dispatch("1");
      assertEquals(Arrays.asList("start 4", "event 1"), describe(journal));
      journal.clear();
      assertTrue(journal.entries().isEmpty());
      assertEquals(Collections.emptyList(), journal.replay(JournalTest::update));
    }
  }

  @Test
  public void entriesCompareByContents() {
    Journal<Integer, String> journal = new Journal<>();
    try (Loop<Integer, String, String> loop = Loop.builder(7, JournalTest::update).journal(journal).build()) {
      loop.dispatch("1");
    }
    List<Journal.Entry<Integer, String>> entries = journal.entries();
    assertEquals(entries, journal.entries());
    assertFalse(entries.get(1).isStart());
    assertEquals("1", entries.get(1).event());
  }
}
