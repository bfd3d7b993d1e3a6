package io.diffuser.examples;

import io.diffuser.Effect;
import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The login demo in Java: a Diffuser renders a login screen, redrawing only the parts that
 * changed; a Fuser gathers the user's events from three widgets into one stream.
 *
 * <p>It prints the same lines as the Swift and C demos (examples/LOGIN_DEMO.md).
 *
 * <pre>java -cp diffuser.jar:diffuser-examples.jar io.diffuser.examples.LoginDemo
 *     [--script FILE | --interactive] [--color | --no-color]</pre>
 */
public final class LoginDemo {
    // ---- Model and update (pure) ------------------------------------------------------

    static final class Header {
        final String title;
        final String subtitle;

        Header(String title, String subtitle) {
            this.title = title;
            this.subtitle = subtitle;
        }

        @Override public boolean equals(Object o) {
            return o instanceof Header && ((Header) o).title.equals(title) && ((Header) o).subtitle.equals(subtitle);
        }

        @Override public int hashCode() { return Objects.hash(title, subtitle); }
    }

    static final class Model {
        final Header header;
        final List<String> hints;
        final String username;
        final String password;
        final String button;

        Model(Header header, String username, String password) {
            this(header, username, password, null);
        }

        /** A model whose hints and button follow from its fields; {@code button} overrides. */
        Model(Header header, String username, String password, String button) {
            List<String> h = new ArrayList<>();
            if (username.isEmpty()) h.add("username is required");
            if (password.length() < 8) h.add("password needs 8+ characters");
            this.header = header;
            this.hints = Collections.unmodifiableList(h);
            this.username = username;
            this.password = password;
            this.button = button != null ? button : h.isEmpty() ? "enabled" : "disabled";
        }

        @Override public boolean equals(Object o) {
            if (!(o instanceof Model)) return false;
            Model m = (Model) o;
            return header.equals(m.header) && hints.equals(m.hints) && username.equals(m.username)
                && password.equals(m.password) && button.equals(m.button);
        }

        @Override public int hashCode() { return Objects.hash(header, hints, username, password, button); }
    }

    interface Event {}

    static final class UsernameChanged implements Event {
        final String text;
        UsernameChanged(String text) { this.text = text; }
    }

    static final class PasswordChanged implements Event {
        final String text;
        PasswordChanged(String text) { this.text = text; }
    }

    static final class LoginClicked implements Event {}

    static Model initial() {
        return new Model(new Header("Welcome back", "Sign in to continue"), "", "");
    }

    static Model update(Model m, Event event) {
        if (event instanceof UsernameChanged) {
            String name = ((UsernameChanged) event).text;
            String subtitle = name.isEmpty() ? "Sign in to continue" : "Signing in as " + name;
            return new Model(new Header(m.header.title, subtitle), name, m.password);
        }
        if (event instanceof PasswordChanged) {
            return new Model(m.header, m.username, ((PasswordChanged) event).text);
        }
        if (!m.button.equals("enabled")) return m;
        if (m.password.equals("opensesame")) {
            return new Model(new Header("Hello, " + m.username + "!", "You are signed in"), m.username, m.password, "signed in");
        }
        return new Model(new Header(m.header.title, "Wrong password, try again"), m.username, "");
    }

    // ---- Widgets: event sources --------------------------------------------------------

    /** A widget whose events reach every connected effect. */
    static final class Widget<T> implements Source<T> {
        private final List<Effect<? super T>> listeners = new CopyOnWriteArrayList<>();

        @Override public Disposable connect(Effect<T> effect) {
            listeners.add(effect);
            return () -> listeners.remove(effect);
        }

        void fire(T value) {
            for (Effect<? super T> listener : listeners) listener.run(value);
        }
    }

    // ---- Rendering ---------------------------------------------------------------------

    static final String[] PARTS = {"header.title", "header.subtitle", "body.hints", "field.username", "field.password", "button.login"};
    static final Map<String, Integer> renders = new LinkedHashMap<>();
    static int renderedThisStep;
    static boolean color;

    static String pad(String s) {
        StringBuilder b = new StringBuilder(s);
        while (b.length() < 17) b.append(' ');
        return b.toString();
    }

    static Effect<String> draw(String part) {
        return text -> {
            renders.merge(part, 1, Integer::sum);
            renderedThisStep++;
            String line = "   " + pad(part) + text;
            System.out.println(color ? "\u001B[1;33m" + line + "\u001B[0m" : line);
        };
    }

    static String stars(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) b.append('*');
        return b.toString();
    }

    static final Widget<String> usernameField = new Widget<>();
    static final Widget<String> passwordField = new Widget<>();
    static final Widget<Object> loginButton = new Widget<>();
    static int steps;

    static void step(String label, Runnable body) {
        System.out.println("-- " + label);
        renderedThisStep = 0;
        body.run();
        steps++;
        System.out.println("   " + renderedThisStep + " of " + PARTS.length + " parts rendered");
    }

    /** Plays one script line on the widgets; false if the line is not understood. */
    static boolean play(String line) {
        String trimmed = line.replaceFirst("^ +", "");
        if (trimmed.isEmpty() || trimmed.startsWith("#")) return true;
        int space = trimmed.indexOf(' ');
        String word = space < 0 ? trimmed : trimmed.substring(0, space);
        String rest = space < 0 ? "" : trimmed.substring(space).replaceFirst("^ +", "");
        switch (word) {
            case "username": step("username \"" + rest + "\"", () -> usernameField.fire(rest)); return true;
            case "password": step("password \"" + rest + "\"", () -> passwordField.fire(rest)); return true;
            case "click": step("click", () -> loginButton.fire(Boolean.TRUE)); return true;
            default: return false;
        }
    }

    static Model model = initial();

    public static void main(String[] args) throws IOException {
        String script = "examples/login.script";
        boolean interactive = false;
        color = System.console() != null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--script": script = args[++i]; break;
                case "--interactive": interactive = true; break;
                case "--color": color = true; break;
                case "--no-color": color = false; break;
                default:
                    System.out.println("usage: LoginDemo [--script FILE | --interactive] [--color | --no-color]");
                    System.exit(2);
            }
        }

        Diffuser<Model> screen = new Diffuser<>(
            Diffuser.map((Model m) -> m.header, Diffuser.intoAll(
                Diffuser.map((Header h) -> h.title, Diffuser.into(draw("header.title"))),
                Diffuser.map((Header h) -> h.subtitle, Diffuser.into(draw("header.subtitle"))))),
            Diffuser.map((Model m) -> m.hints.isEmpty() ? "ready" : String.join("; ", m.hints), Diffuser.into(draw("body.hints"))),
            Diffuser.map((Model m) -> "\"" + m.username + "\"", Diffuser.into(draw("field.username"))),
            Diffuser.map((Model m) -> "\"" + stars(m.password.length()) + "\"", Diffuser.into(draw("field.password"))),
            Diffuser.map((Model m) -> "( Log in ) " + m.button, Diffuser.into(draw("button.login"))));

        Fuser<Event> events = new Fuser<Event>(
            Fuser.<String, Event>extract(UsernameChanged::new, Fuser.from(usernameField)),
            Fuser.<String, Event>extract(PasswordChanged::new, Fuser.from(passwordField)),
            Fuser.<Object, Event>extractConstant(new LoginClicked(), Fuser.from(loginButton)));

        System.out.println("Login demo (Java): a Diffuser renders the screen, a Fuser gathers the user's events.");
        // The connection lasts for the try block: closing a Disposable disposes it.
        Disposable connection = events.connect(event -> {
            model = update(model, event);
            screen.run(model);
        });
        try (connection) {
            step("start", () -> screen.run(model));

            if (interactive) {
                System.out.println("Type: username TEXT | password TEXT | click | quit");
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                while (true) {
                    System.out.print("> ");
                    System.out.flush();
                    String line = in.readLine();
                    if (line == null || line.equals("quit")) break;
                    if (!play(line)) System.out.println("   ? try: username alice | password opensesame | click");
                }
            } else {
                for (String line : Files.readAllLines(Paths.get(script), StandardCharsets.UTF_8)) {
                    if (!play(line)) {
                        System.out.println("bad script line: " + line);
                        System.exit(1);
                    }
                }
            }
        }

        int total = 0;
        System.out.println("Renders per part over " + steps + " steps (a naive renderer redraws every part at every step):");
        for (String part : PARTS) {
            int n = renders.getOrDefault(part, 0);
            total += n;
            System.out.println("   " + pad(part) + n + " of " + steps);
        }
        int naive = steps * PARTS.length;
        System.out.println("   " + pad("total") + total + " of " + naive + " (" + (naive - total) * 100 / naive + "% fewer draws)");
    }
}
