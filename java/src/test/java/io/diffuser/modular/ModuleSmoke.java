package io.diffuser.modular;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import io.diffuser.list.ListDiff;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The program JarTest runs in another JVM with the jar on the module path: a user of
 * module {@code io.diffuser}, which sees the API packages and not the internals.
 */
public final class ModuleSmoke {
  private ModuleSmoke() {}

  /**
   * Prints the module's name and exports, the effects of a small diffuser and fuser, and
   * whether the internals can be reached by reflection.
   *
   * @param args ignored
   */
  public static void main(String[] args) throws Exception {
    Module module = Diffuser.class.getModule();
    System.out.println("module " + module.getName());
    TreeSet<String> exported = new TreeSet<>();
    for (String pkg : module.getPackages()) {
      if (module.isExported(pkg)) {
        exported.add(pkg);
      }
    }
    System.out.println("exports " + String.join(" ", exported));

    List<String> out = new ArrayList<>();
    Diffuser<String> d = Diffuser.map((String s) -> s.length(), Diffuser.into(n -> out.add("len " + n)));
    d.run("abc");
    d.run("xyz");
    d.run("four");
    List<io.diffuser.Effect<String>> effects = new ArrayList<>();
    Source<String> source = e -> {
      effects.add(e);
      return () -> effects.remove(e);
    };
    Disposable connection = Fuser.extract((String s) -> s.toUpperCase(), Fuser.from(source))
        .connect(v -> out.add("event " + v));
    try {
      effects.get(0).run("hi");
    } finally {
      connection.dispose();
    }
    out.add("sources left " + effects.size());
    System.out.println(String.join(", ", out));

    // The list diff: its native method is found in the module's glue library too.
    ListDiff list = ListDiff.ofKeys(new long[] {1, 2, 3}, new long[] {3, 1, 2}, ListDiff.Part.SCRIPT);
    System.out.println("list moves " + java.util.Arrays.toString(list.moves) + ", " + list.script);

    Class<?> internal = Class.forName("io.diffuser.internal.Native");
    Method version = internal.getMethod("version");
    try {
      version.invoke(null);
      System.out.println("internal reachable");
    } catch (IllegalAccessException e) {
      System.out.println("internal not reachable");
    }
  }
}
