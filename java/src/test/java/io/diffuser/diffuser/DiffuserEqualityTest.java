package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * The gates compare values exactly as {@link Objects#equals(Object, Object)} does. The
 * native glue decides Strings, boxed primitives and enums itself and asks every other
 * class its {@code equals}; these tests pin both paths to the Java definition.
 */
public class DiffuserEqualityTest {

  /**
   * Whether an {@code into} gate runs its effect for {@code second} after a run with
   * {@code first}, i.e. whether the gate found the two values different.
   */
  private static boolean changes(Object first, Object second) {
    List<Object> seen = new ArrayList<>();
    Diffuser<Object> d = Diffuser.into(seen::add);
    d.run(first);
    d.run(second);
    assertTrue(seen.size() == 1 || seen.size() == 2);
    return seen.size() == 2;
  }

  /** Checks the gate against Objects.equals and against the expected answer. */
  private static void assertEqualValues(boolean expectedEqual, Object first, Object second) {
    assertEquals("Objects.equals(" + first + ", " + second + ")", expectedEqual,
        Objects.equals(first, second));
    assertEquals("gate on " + first + " then " + second, !expectedEqual, changes(first, second));
  }

  /** A String with the same characters as {@code s} and its own storage. */
  private static String copy(String s) {
    String c = new String(s.toCharArray());
    assertNotSame(s, c);
    return c;
  }

  @Test
  public void stringsCompareByContents() {
    assertEqualValues(true, "hello", copy("hello"));
    assertEqualValues(true, "", copy(""));
    assertEqualValues(false, "hello", "hellp");
    assertEqualValues(false, "hello", "hell");
    assertEqualValues(false, "hell", "hello");
    assertEqualValues(false, "", "a");
    assertEqualValues(false, "Hello", "hello");
  }

  @Test
  public void nonAsciiStringsCompareByContents() {
    assertEqualValues(true, "Größe", copy("Größe"));        // Latin-1 storage
    assertEqualValues(true, "日本語のテキスト", copy("日本語のテキスト")); // UTF-16 storage
    assertEqualValues(true, "a\uD83D\uDE00b", copy("a\uD83D\uDE00b")); // surrogate pair
    assertEqualValues(false, "Größe", "Grösse");
    assertEqualValues(false, "é", "ĕ");                     // Latin-1 against UTF-16
    assertEqualValues(false, "e", "é");
    assertEqualValues(false, "日本語", "日本人");
    assertEqualValues(false, "\uD83D\uDE00", "\uD83D\uDE01");
  }

  @Test
  public void longStringsCompareEveryCharacter() {
    char[] chars = new char[1000];
    Arrays.fill(chars, 'x');
    String longString = new String(chars);
    assertEqualValues(true, longString, copy(longString));
    for (int at : new int[] {0, 255, 256, 257, 511, 512, 999}) {
      char[] other = chars.clone();
      other[at] = 'y';
      assertEqualValues(false, longString, new String(other));
    }
    assertEqualValues(false, longString, longString.substring(1));
  }

  @Test
  public void stringsAreNotEqualToOtherTypes() {
    assertEqualValues(false, "1", 1);
    assertEqualValues(false, 1, "1");
    assertEqualValues(false, "A", 'A');
    assertEqualValues(false, "true", true);
    assertEqualValues(false, "abc", new StringBuilder("abc"));
  }

  @Test
  public void boxedIntegersCompareByValueAndExactClass() {
    Integer big = 1_000_000;
    Integer sameBig = Integer.valueOf(1_000_000);
    assertNotSame(big, sameBig);
    assertEqualValues(true, big, sameBig);
    assertEqualValues(false, big, 1_000_001);
    assertEqualValues(false, 1, 1L);
    assertEqualValues(false, 1L, 1);
    assertEqualValues(false, (short) 1, 1);
    assertEqualValues(false, (byte) 1, (short) 1);
    assertEqualValues(true, Long.valueOf(Long.MAX_VALUE), Long.valueOf(Long.MAX_VALUE));
    assertEqualValues(false, Long.MAX_VALUE, Long.MIN_VALUE);
    assertEqualValues(false, 1L << 32, 0L); // differ only above 32 bits
    assertEqualValues(true, Short.valueOf((short) 30000), Short.valueOf((short) 30000));
    assertEqualValues(false, (short) 30000, (short) -30000);
    assertEqualValues(false, (byte) 1, (byte) -1);
  }

  @Test
  @SuppressWarnings({"deprecation", "removal"}) // distinct boxes with equal values
  public void boxedBooleansAndCharactersCompareByValue() {
    assertEqualValues(true, new Boolean(true), Boolean.TRUE);
    assertEqualValues(true, new Boolean(false), new Boolean(false));
    assertEqualValues(false, true, false);
    assertEqualValues(true, new Character('\u00e9'), Character.valueOf('\u00e9'));
    assertEqualValues(false, 'a', 'b');
    assertEqualValues(false, 'a', (int) 'a');
    assertEqualValues(false, 'a', (short) 'a');
  }

  @Test
  public void doublesCompareLikeDoubleEquals() {
    assertEqualValues(true, Double.valueOf(1.5), Double.valueOf(1.5));
    assertEqualValues(false, 1.5, 2.5);
    assertEqualValues(true, Double.NaN, Double.valueOf(Double.NaN));
    // Another NaN bit pattern: Double.equals canonicalizes NaNs through doubleToLongBits.
    double otherNaN = Double.longBitsToDouble(0x7ff8_0000_0000_0001L);
    assertTrue(Double.isNaN(otherNaN));
    assertEqualValues(true, Double.NaN, otherNaN);
    assertEqualValues(false, Double.NaN, 1.0);
    assertEqualValues(false, 1.0, Double.NaN);
    assertEqualValues(false, 0.0, -0.0);
    assertEqualValues(false, -0.0, 0.0);
    assertEqualValues(true, Double.valueOf(-0.0), Double.valueOf(-0.0));
    assertEqualValues(true, Double.valueOf(Double.POSITIVE_INFINITY), Double.POSITIVE_INFINITY);
    assertEqualValues(false, 1.0, 1.0f);
    assertEqualValues(false, 1.0, 1);
  }

  @Test
  public void floatsCompareLikeFloatEquals() {
    assertEqualValues(true, Float.valueOf(1.5f), Float.valueOf(1.5f));
    assertEqualValues(false, 1.5f, 2.5f);
    float otherNaN = Float.intBitsToFloat(0x7fc0_0001);
    assertTrue(Float.isNaN(otherNaN));
    assertEqualValues(true, Float.NaN, otherNaN);
    assertEqualValues(false, 0.0f, -0.0f);
    assertEqualValues(false, 1.0f, 1.0);
  }

  private enum Color {
    RED,
    GREEN,
    /** A constant with a body: an instance of a subclass of Color. */
    BLUE {
      @Override
      public String toString() {
        return "blue";
      }
    }
  }

  private enum Shade {
    RED
  }

  @Test
  public void enumsCompareByIdentity() {
    assertEqualValues(true, Color.RED, Color.valueOf("RED"));
    assertEqualValues(true, Color.BLUE, Color.valueOf("BLUE"));
    assertEqualValues(false, Color.RED, Color.GREEN);
    assertEqualValues(false, Color.GREEN, Color.BLUE);
    assertEqualValues(false, Color.BLUE, Color.RED);
    assertEqualValues(false, Color.RED, Shade.RED);
    assertEqualValues(false, Color.RED, "RED");
  }

  @Test
  public void nullEqualsOnlyNull() {
    assertEqualValues(true, null, null);
    assertEqualValues(false, null, "a");
    assertEqualValues(false, "a", null);
    assertEqualValues(false, null, 0);
    assertEqualValues(false, 0, null);
    assertEqualValues(false, null, Color.RED);
    // The first run of a gate runs its effect whatever the value, null included.
    List<Object> seen = new ArrayList<>();
    Diffuser<Object> d = Diffuser.into(seen::add);
    d.run(null);
    d.run(null);
    assertEquals(Arrays.asList((Object) null), seen);
  }

  /** A value with its own equals: counts the calls, compares {@code key}. */
  private static final class Key {
    static final AtomicInteger EQUALS_CALLS = new AtomicInteger();
    final String key;

    Key(String key) {
      this.key = key;
    }

    @Override
    public boolean equals(Object o) {
      EQUALS_CALLS.incrementAndGet();
      return o instanceof Key && ((Key) o).key.equals(key);
    }

    @Override
    public int hashCode() {
      return key.hashCode();
    }

    @Override
    public String toString() {
      return "Key(" + key + ")";
    }
  }

  /** A Comparable value (so not turned away by the native pre-check) with its own equals. */
  private static final class Version implements Comparable<Version> {
    final int major;
    final String label;

    Version(int major, String label) {
      this.major = major;
      this.label = label;
    }

    /** Versions are equal by major number alone. */
    @Override
    public boolean equals(Object o) {
      return o instanceof Version && ((Version) o).major == major;
    }

    @Override
    public int hashCode() {
      return major;
    }

    @Override
    public int compareTo(Version o) {
      return Integer.compare(major, o.major);
    }

    @Override
    public String toString() {
      return "Version(" + major + ", " + label + ")";
    }
  }

  /** A Number whose equals compares values (unlike the JDK's boxes, across classes). */
  private static final class Amount extends Number {
    private static final long serialVersionUID = 1L;
    final long value;

    Amount(long value) {
      this.value = value;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Number && ((Number) o).longValue() == value;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(value);
    }

    @Override
    public int intValue() {
      return (int) value;
    }

    @Override
    public long longValue() {
      return value;
    }

    @Override
    public float floatValue() {
      return value;
    }

    @Override
    public double doubleValue() {
      return value;
    }
  }

  @Test
  public void otherClassesAreAskedTheirEquals() {
    int before = Key.EQUALS_CALLS.get();
    assertEqualValues(true, new Key("a"), new Key("a"));
    assertEqualValues(false, new Key("a"), new Key("b"));
    assertTrue(Key.EQUALS_CALLS.get() > before);

    assertEqualValues(true, new Version(2, "two"), new Version(2, "deux"));
    assertEqualValues(false, new Version(2, "two"), new Version(3, "two"));

    assertEqualValues(true, new Amount(7), new Amount(7));
    assertEqualValues(false, new Amount(7), new Amount(8));
    assertEqualValues(true, new Amount(7), 7); // Amount.equals accepts an Integer
    assertEqualValues(true, new BigDecimal("1.0"), new BigDecimal("1.0"));
    assertEqualValues(false, new BigDecimal("1.0"), new BigDecimal("1.00"));
    assertEqualValues(false, new AtomicInteger(1), new AtomicInteger(1)); // identity equals
    assertEqualValues(true, Arrays.asList("a", 1), Arrays.asList(copy("a"), 1));
    assertEqualValues(false, Arrays.asList("a", 1), Arrays.asList("a", 1L));
  }

  /** An equals that is never true, not even for the object itself. */
  private static final class NeverEqual {
    @Override
    public boolean equals(Object o) {
      return false;
    }

    @Override
    public int hashCode() {
      return 0;
    }
  }

  @Test
  public void theSameObjectIsEqualWithoutAskingEquals() {
    NeverEqual x = new NeverEqual();
    assertEqualValues(true, x, x); // Objects.equals tests identity first
    assertEqualValues(false, x, new NeverEqual());
  }

  /** An equals that throws while armed. */
  private static final class Explosive {
    static final RuntimeException FAILURE = new IllegalStateException("equals failed");
    static boolean armed;

    @Override
    public boolean equals(Object o) {
      if (armed) throw FAILURE;
      return o instanceof Explosive;
    }

    @Override
    public int hashCode() {
      return 1;
    }
  }

  @Test
  public void anExceptionFromEqualsReachesTheCallerAndTheGateRetries() {
    List<Object> seen = new ArrayList<>();
    Diffuser<Object> d = Diffuser.map((Object v) -> v, Diffuser.into(seen::add));
    Explosive first = new Explosive();
    Explosive second = new Explosive();
    d.run(first);
    Explosive.armed = true;
    try {
      d.run(second);
      fail("run should have thrown");
    } catch (IllegalStateException e) {
      assertSame(Explosive.FAILURE, e);
    } finally {
      Explosive.armed = false;
    }
    // The gate kept `first`: an equal value is skipped, a different one runs.
    d.run(second);
    d.run("other");
    assertEquals(2, seen.size());
    assertSame(first, seen.get(0));
    assertEquals("other", seen.get(1));
  }
}
