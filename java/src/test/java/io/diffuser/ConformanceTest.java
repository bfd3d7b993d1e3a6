package io.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import io.diffuser.diffuser.DidChange;
import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * Runs every vector of conformance/ (conformance/README.md) against the Java API, which
 * executes them in the Swift core through JNI and the C ABI. Fails on any mismatch,
 * unknown operation or vector that could not be run.
 */
public class ConformanceTest {
    /** Thrown by an effect listed in a step's fail set; must reach the caller unchanged. */
    static final class LabelFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String label;

        LabelFailure(String label) {
            super("effect " + label + " fails");
            this.label = label;
        }
    }

    static final class Unsupported extends Exception {
        private static final long serialVersionUID = 1L;
        Unsupported(String message) {
            super(message);
        }
    }

    /** What one step observes. */
    static final class StepState {
        List<List<Object>> log = new ArrayList<>();
        Set<String> failing = new HashSet<>();

        Effect<Object> effect(String label) {
            return value -> {
                if (failing.contains(label)) throw new LabelFailure(label);
                log.add(java.util.Arrays.asList(label, value));
            };
        }
    }

    // ---- JSON as plain Java values: Long, Boolean, String, List, Map, null (README 6) ----

    static Object plain(JsonElement e) throws Unsupported {
        if (e == null || e.isJsonNull()) return null;
        if (e.isJsonArray()) {
            List<Object> list = new ArrayList<>();
            for (JsonElement x : e.getAsJsonArray()) list.add(plain(x));
            return Collections.unmodifiableList(list);
        }
        if (e.isJsonObject()) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (Map.Entry<String, JsonElement> x : e.getAsJsonObject().entrySet()) map.put(x.getKey(), plain(x.getValue()));
            return Collections.unmodifiableMap(map);
        }
        JsonPrimitive p = e.getAsJsonPrimitive();
        if (p.isBoolean()) return p.getAsBoolean();
        if (p.isString()) return p.getAsString();
        String text = p.getAsString();
        if (text.contains(".") || text.contains("e") || text.contains("E")) throw new Unsupported("float " + text);
        return Long.parseLong(text);
    }

    static Object not(Object x) {
        return x == null || Boolean.FALSE.equals(x);
    }

    static Function<Object, Object> selector(JsonObject s) throws Unsupported {
        if (s.has("identity")) return x -> x;
        if (s.has("field")) {
            String name = s.get("field").getAsString();
            return x -> x instanceof Map ? ((Map<?, ?>) x).get(name) : null;
        }
        if (s.has("path")) {
            List<Object> path = new ArrayList<>();
            for (JsonElement step : s.getAsJsonArray("path")) path.add(plain(step));
            return x -> {
                Object v = x;
                for (Object step : path) {
                    if (step instanceof String && v instanceof Map && ((Map<?, ?>) v).containsKey(step)) {
                        v = ((Map<?, ?>) v).get(step);
                    } else if (step instanceof Long && v instanceof List && (Long) step < ((List<?>) v).size()) {
                        v = ((List<?>) v).get(((Long) step).intValue());
                    } else {
                        return null;
                    }
                }
                return v;
            };
        }
        throw new Unsupported("unknown selector " + s);
    }

    static DidChange<Object> predicate(String name) throws Unsupported {
        switch (name) {
            case "changed": return (a, b) -> !Objects.equals(a, b);
            case "always": return (a, b) -> true;
            case "never": return (a, b) -> false;
            case "increased": return (a, b) -> a instanceof Long && b instanceof Long && (Long) b > (Long) a;
            case "decreased": return (a, b) -> a instanceof Long && b instanceof Long && (Long) b < (Long) a;
            default: throw new Unsupported("unknown predicate " + name);
        }
    }

    static Function<Object, Object> transform(String name) throws Unsupported {
        if (name.startsWith("field:")) {
            String k = name.substring(6);
            return x -> x instanceof Map ? ((Map<?, ?>) x).get(k) : null;
        }
        if (name.startsWith("wrap:")) {
            String k = name.substring(5);
            return x -> {
                Map<String, Object> m = new HashMap<>();
                m.put(k, x);
                return m;
            };
        }
        switch (name) {
            case "identity": return x -> x;
            case "double": return x -> x instanceof Long ? (Object) (2 * (Long) x) : null;
            case "negate": return x -> x instanceof Long ? (Object) (-(Long) x) : null;
            case "not": return ConformanceTest::not;
            case "length": return x -> x instanceof String ? (Object) (long) ((String) x).length()
                : x instanceof List ? (Object) (long) ((List<?>) x).size()
                : x instanceof Map ? (Object) (long) ((Map<?, ?>) x).size() : null;
            default: throw new Unsupported("unknown transform " + name);
        }
    }

    // ---- Building -------------------------------------------------------------------

    static String str(JsonObject o, String key) throws Unsupported {
        if (!o.has(key)) throw new Unsupported("missing " + key + " in " + o);
        return o.get(key).getAsString();
    }

    static final class DiffuserBuilder {
        final JsonObject named;
        final StepState state;
        final Map<String, Diffuser<Object>> built = new HashMap<>();

        DiffuserBuilder(JsonObject named, StepState state) {
            this.named = named;
            this.state = state;
        }

        List<Diffuser<Object>> children(JsonObject node) throws Unsupported {
            List<Diffuser<Object>> list = new ArrayList<>();
            for (JsonElement c : node.getAsJsonArray("children")) list.add(build(c.getAsJsonObject()));
            return list;
        }

        Diffuser<Object> build(JsonObject node) throws Unsupported {
            String op = str(node, "op");
            switch (op) {
                case "ref": {
                    String name = str(node, "ref");
                    if (built.containsKey(name)) return built.get(name);
                    if (!named.has(name)) throw new Unsupported("unknown ref " + name);
                    Diffuser<Object> made = build(named.getAsJsonObject(name));
                    built.put(name, made);
                    return made;
                }
                case "intoAlways":
                    return node.has("children") ? Diffuser.intoAlways(children(node)) : Diffuser.intoAlways(state.effect(str(node, "effect")));
                case "into": return Diffuser.into(state.effect(str(node, "effect")));
                case "intoOnce": return Diffuser.intoOnce(state.effect(str(node, "effect")));
                case "intoAll": return Diffuser.intoAll(children(node));
                case "intoWhen": {
                    DidChange<Object> p = predicate(str(node, "predicate"));
                    return node.has("child") ? Diffuser.intoWhen(p, build(node.getAsJsonObject("child")))
                        : Diffuser.intoWhen(p, state.effect(str(node, "effect")));
                }
                case "map": return Diffuser.map(selector(node.getAsJsonObject("selector")), build(node.getAsJsonObject("child")));
                case "invert": return Diffuser.map(ConformanceTest::not, build(node.getAsJsonObject("child")));
                default: throw new Unsupported("unknown diffuser op " + op);
            }
        }
    }

    /** A scripted source: logs connects and every dispose call; emits in connection order. */
    static final class ScriptedSource implements Source<Object> {
        final String name;
        final StepState state;
        final List<Effect<Object>> connections = new ArrayList<>();

        ScriptedSource(String name, StepState state) {
            this.name = name;
            this.state = state;
        }

        @Override
        public Disposable connect(Effect<Object> effect) {
            connections.add(effect);
            state.log.add(java.util.Arrays.asList("connect", name));
            return () -> {   // deliberately not idempotent (README 4.2)
                connections.remove(effect);
                state.log.add(java.util.Arrays.asList("dispose", name));
            };
        }
    }

    static final class FuserBuilder {
        final JsonObject named;
        final Map<String, ScriptedSource> sources;
        final Map<String, Fuser<Object>> built = new HashMap<>();

        FuserBuilder(JsonObject named, Map<String, ScriptedSource> sources) {
            this.named = named;
            this.sources = sources;
        }

        Fuser<Object> build(JsonObject node) throws Unsupported {
            String op = str(node, "op");
            switch (op) {
                case "ref": {
                    String name = str(node, "ref");
                    if (built.containsKey(name)) return built.get(name);
                    if (!named.has(name)) throw new Unsupported("unknown ref " + name);
                    Fuser<Object> made = build(named.getAsJsonObject(name));
                    built.put(name, made);
                    return made;
                }
                case "from": {
                    ScriptedSource s = sources.get(str(node, "source"));
                    if (s == null) throw new Unsupported("unknown source in " + node);
                    return Fuser.from(s);
                }
                case "fromAll": {
                    List<Fuser<Object>> list = new ArrayList<>();
                    for (JsonElement c : node.getAsJsonArray("children")) list.add(build(c.getAsJsonObject()));
                    return Fuser.fromAll(list);
                }
                case "extract": return Fuser.extract(transform(str(node, "transform")), build(node.getAsJsonObject("child")));
                case "extractConstant": return Fuser.extractConstant(plain(node.get("constant")), build(node.getAsJsonObject("child")));
                case "extractUnlessNull": return Fuser.extractUnlessNull(transform(str(node, "transform")), build(node.getAsJsonObject("child")));
                default: throw new Unsupported("unknown fuser op " + op);
            }
        }
    }

    // ---- Running ---------------------------------------------------------------------

    static String check(int index, JsonObject step, StepState state, String error) throws Unsupported {
        JsonObject expect = step.getAsJsonObject("expect");
        Object expectedLog = plain(expect.getAsJsonArray("log"));
        if (!Objects.equals(expectedLog, state.log)) {
            return "step " + index + ": log\n  got      " + state.log + "\n  expected " + expectedLog;
        }
        String expectedError = expect.get("error").isJsonNull() ? null : expect.get("error").getAsString();
        if (!Objects.equals(expectedError, error)) return "step " + index + ": error " + error + ", expected " + expectedError;
        return null;
    }

    static Set<String> failSet(JsonObject step) {
        Set<String> set = new HashSet<>();
        if (step.has("fail")) for (JsonElement e : step.getAsJsonArray("fail")) set.add(e.getAsString());
        return set;
    }

    /** Runs one vector; returns a description of the first mismatch, or null. */
    static String runVector(JsonObject vector) throws Unsupported {
        StepState state = new StepState();
        JsonObject named = vector.has("nodes") ? vector.getAsJsonObject("nodes") : new JsonObject();
        JsonArray steps = vector.getAsJsonArray("steps");
        String kind = str(vector, "kind");
        if (kind.equals("diffuser")) {
            Diffuser<Object> diffuser = new DiffuserBuilder(named, state).build(vector.getAsJsonObject("root"));
            for (int i = 0; i < steps.size(); i++) {
                JsonObject step = steps.get(i).getAsJsonObject();
                if (!step.has("run")) throw new Unsupported("diffuser step without run");
                state.log = new ArrayList<>();
                state.failing = failSet(step);
                String error = null;
                try {
                    diffuser.run(plain(step.get("run")));
                } catch (LabelFailure failure) {
                    error = failure.label;
                }
                String mismatch = check(i, step, state, error);
                if (mismatch != null) return mismatch;
            }
        } else if (kind.equals("fuser")) {
            Map<String, ScriptedSource> sources = new HashMap<>();
            for (JsonElement s : vector.getAsJsonArray("sources")) sources.put(s.getAsString(), new ScriptedSource(s.getAsString(), state));
            Fuser<Object> fuser = new FuserBuilder(named, sources).build(vector.getAsJsonObject("root"));
            Map<String, Disposable> connections = new HashMap<>();
            try {
                for (int i = 0; i < steps.size(); i++) {
                    JsonObject step = steps.get(i).getAsJsonObject();
                    state.log = new ArrayList<>();
                    state.failing = failSet(step);
                    String error = null;
                    if (step.has("connect")) {
                        String label = step.get("connect").getAsString();
                        connections.put(label, fuser.connect(state.effect(label)));
                    } else if (step.has("dispose")) {
                        Disposable d = connections.get(step.get("dispose").getAsString());
                        if (d == null) throw new Unsupported("dispose of an unknown connection");
                        d.dispose();
                    } else if (step.has("emit")) {
                        ScriptedSource source = sources.get(step.get("emit").getAsString());
                        if (source == null) throw new Unsupported("emit on an unknown source");
                        Object value = plain(step.get("value"));
                        for (Effect<Object> connection : new ArrayList<>(source.connections)) {
                            try {
                                connection.run(value);
                            } catch (LabelFailure failure) {
                                error = failure.label;
                                break;
                            }
                        }
                    } else {
                        throw new Unsupported("unknown fuser step " + step);
                    }
                    String mismatch = check(i, step, state, error);
                    if (mismatch != null) return mismatch;
                }
            } finally {
                for (Disposable d : connections.values()) d.dispose();
            }
        } else {
            throw new Unsupported("unknown kind " + kind);
        }
        return null;
    }

    @Test
    public void everyConformanceVector() throws IOException {
        Path root = Paths.get(System.getProperty("diffuser.conformance", "../conformance"));
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(p -> p.toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
        assertTrue("the corpus is incomplete: " + files.size() + " vectors in " + root.toAbsolutePath(), files.size() >= 600);
        int passed = 0;
        List<String> failures = new ArrayList<>();
        for (Path file : files) {
            try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                String mismatch = runVector(JsonParser.parseReader(reader).getAsJsonObject());
                if (mismatch == null) passed++;
                else failures.add(file.getFileName() + ": " + mismatch);
            } catch (Exception e) {
                failures.add(file.getFileName() + ": could not run: " + e);
            }
        }
        String summary = "Conformance (Java): " + files.size() + " vectors executed, " + passed + " passed, " + failures.size() + " failed";
        System.out.println(summary);
        String report = System.getProperty("diffuser.conformanceReport");
        if (report != null) Files.write(Paths.get(report), (summary + "\n").getBytes(StandardCharsets.UTF_8));
        if (!failures.isEmpty()) fail(failures.size() + " vectors failed, first: " + failures.get(0));
        assertEquals(files.size(), passed);
    }
}
