package io.diffuser;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.internal.Native;
import java.util.ArrayList;
import java.util.List;

/** The program JarTest runs in a separate JVM, from the built jar. */
public final class JarSmoke {
  private JarSmoke() {}

  /**
   * Prints where the natives came from and the effects of a small diffuser and fuser.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    List<String> out = new ArrayList<>();
    Diffuser<String> d = Diffuser.intoAll(Diffuser.map((String s) -> s.length(), Diffuser.into(n -> out.add("len " + n))));
    d.run("abc");
    d.run("abc");
    d.run("xyz");
    d.run("four");
    List<Effect<String>> effects = new ArrayList<>();
    Disposable c = Fuser.extract((String s) -> s.toUpperCase(), Fuser.from((Effect<String> e) -> {
      effects.add(e);
      return () -> effects.remove(e);
    })).connect(v -> out.add("event " + v));
    effects.get(0).run("hi");
    c.dispose();
    System.out.println("loaded from " + Native.loadedFrom());
    System.out.println("version " + Native.version());
    System.out.println(String.join(", ", out));
  }
}
