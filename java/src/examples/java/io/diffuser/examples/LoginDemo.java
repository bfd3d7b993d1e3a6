package io.diffuser.examples;

import io.diffuser.Effect;
import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import io.diffuser.loop.Job;
import io.diffuser.loop.Loop;
import io.diffuser.loop.LoopTrace;
import io.diffuser.loop.Next;

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
 * The login demo in Java: a loop drives a login screen. A Fuser gathers the user's events
 * from three widgets, the update reduces them into the model and asks for a login effect,
 * an effect handler performs the login (simulated) and sends the answer back as an event,
 * and a Diffuser renders each model, redrawing only the parts that changed.
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

    /** The user's edits and clicks, and the server's answers (sent back by the handler). */
    interface Event {
        /** How the demo prints the event (the same text in every language). */
        String label();
    }

    static final class UsernameChanged implements Event {
        final String text;
        UsernameChanged(String text) { this.text = text; }
        @Override public String label() { return "username \"" + text + "\""; }
    }

    static final class PasswordChanged implements Event {
        final String text;
        PasswordChanged(String text) { this.text = text; }
        @Override public String label() { return "password \"" + text + "\""; }
    }

    static final class LoginClicked implements Event {
        @Override public String label() { return "click"; }
    }

    static final class LoginAccepted implements Event {
        @Override public String label() { return "login accepted"; }
    }

    static final class LoginRefused implements Event {
        @Override public String label() { return "login refused"; }
    }

    /** What the update asks the world to do: log in. */
    static final class Login {
        final String username;
        final String password;

        Login(String username, String password) {
            this.username = username;
            this.password = password;
        }
    }

    static Model initial() {
        return new Model(new Header("Welcome back", "Sign in to continue"), "", "");
    }

    /** What each event does to the model, and which effects it asks for. A click on a
     *  disabled button changes nothing: no new model, nothing published. */
    static Next<Model, Login> update(Model m, Event event) {
        if (event instanceof UsernameChanged) {
            String name = ((UsernameChanged) event).text;
            String subtitle = name.isEmpty() ? "Sign in to continue" : "Signing in as " + name;
            return Next.next(new Model(new Header(m.header.title, subtitle), name, m.password));
        }
        if (event instanceof PasswordChanged) {
            return Next.next(new Model(m.header, m.username, ((PasswordChanged) event).text));
        }
        if (event instanceof LoginClicked) {
            if (!m.button.equals("enabled")) return Next.noChange();
            return Next.next(new Model(m.header, m.username, m.password, "signing in"), new Login(m.username, m.password));
        }
        if (event instanceof LoginAccepted) {
            return Next.next(new Model(new Header("Hello, " + m.username + "!", "You are signed in"), m.username, m.password, "signed in"));
        }
        return Next.next(new Model(new Header(m.header.title, "Wrong password, try again"), m.username, ""));
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
    /** Draws per part, over the whole session. */
    static final Map<String, Integer> renders = new LinkedHashMap<>();
    /** Draws since the last model was rendered in full. */
    static int renderedThisModel;
    static boolean color;

    static String pad(String s) {
        StringBuilder b = new StringBuilder(s);
        while (b.length() < 17) b.append(' ');
        return b.toString();
    }

    static Effect<String> draw(String part) {
        return text -> {
            renders.merge(part, 1, Integer::sum);
            renderedThisModel++;
            String line = "   " + pad(part) + text;
            System.out.println(color ? "\u001B[1;33m" + line + "\u001B[0m" : line);
        };
    }

    static String stars(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) b.append('*');
        return b.toString();
    }

    // ---- The loop: events -> update -> model -> screen; effects -> handler -> events ----

    static int eventsHandled;
    static int effectsHandled;
    static int modelsRendered;

    /** The effect handler: a simulated server, deterministic and immediate. The answer is
     *  queued: the loop handles it after this step, as its own step. */
    static void serve(Login login, Job<Event> job) {
        Event answer = login.password.equals("opensesame") ? new LoginAccepted() : new LoginRefused();
        effectsHandled++;
        System.out.println("   " + pad("effect") + "login \"" + login.username + "\" -> sends " + answer.label());
        job.send(answer);
        job.finish();
    }

    /** Prints what the loop does: each start and each event, as the update sees it. */
    static void inspect(LoopTrace<Model, Event, Login> trace) {
        if (trace.kind() == LoopTrace.Kind.STARTED) {
            System.out.println("-- start");
        } else if (trace.kind() == LoopTrace.Kind.STEPPED) {
            eventsHandled++;
            System.out.println("-- " + trace.event().label());
            if (!trace.hasNextModel()) System.out.println("   no new model: nothing rendered");
        }
    }

    static final Widget<String> usernameField = new Widget<>();
    static final Widget<String> passwordField = new Widget<>();
    static final Widget<Object> loginButton = new Widget<>();

    /** Plays one line on the widgets; false if the line is not understood. */
    static boolean play(String line) {
        String trimmed = line.replaceFirst("^ +", "");
        if (trimmed.isEmpty() || trimmed.startsWith("#")) return true;
        int space = trimmed.indexOf(' ');
        String word = space < 0 ? trimmed : trimmed.substring(0, space);
        String rest = space < 0 ? "" : trimmed.substring(space).replaceFirst("^ +", "");
        switch (word) {
            case "username": usernameField.fire(rest); return true;
            case "password": passwordField.fire(rest); return true;
            case "click": loginButton.fire(Boolean.TRUE); return true;
            default: return false;
        }
    }

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

        // The loop, started once the screen, the counter and the widgets are wired to it;
        // closing it (the end of the try block) disposes it and disconnects the widgets.
        try (Loop<Model, Event, Login> loop = Loop.<Model, Event, Login>builder(initial(), LoginDemo::update)
                .handler(LoginDemo::serve)
                .inspector(LoginDemo::inspect)
                .manualStart()
                .build()) {
            loop.render(screen);
            loop.observe(model -> {
                modelsRendered++;
                System.out.println("   " + renderedThisModel + " of " + PARTS.length + " parts rendered");
                renderedThisModel = 0;
            });
            loop.connect(events);

            System.out.println("Login demo (Java): a Loop updates the model, a Diffuser renders it, a Fuser gathers the user's events.");
            loop.start();
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
        System.out.println("Renders per part over " + modelsRendered + " models (a naive renderer redraws every part of every model):");
        for (String part : PARTS) {
            int n = renders.getOrDefault(part, 0);
            total += n;
            System.out.println("   " + pad(part) + n + " of " + modelsRendered);
        }
        int naive = modelsRendered * PARTS.length;
        System.out.println("   " + pad("total") + total + " of " + naive + " (" + (naive - total) * 100 / naive + "% fewer draws)");
        System.out.println("Loop: events handled: " + eventsHandled + " (" + (eventsHandled - effectsHandled)
            + " from the widgets, " + effectsHandled + " sent back by the effect handler); effects handled: "
            + effectsHandled);
    }
}
