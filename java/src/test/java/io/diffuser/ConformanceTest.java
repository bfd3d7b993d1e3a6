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
import io.diffuser.list.ListBatch;
import io.diffuser.list.ListDiff;
import io.diffuser.list.ListSink;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
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
 * Runs every vector of conformance/ (conformance/README.md, and the exactness extension of
 * its format: equality kinds, the failing equality "boom", labelled maps and predicates)
 * against the Java API, which executes them in the Swift core through JNI and the C ABI,
 * once per {@link Form}. Fails on any mismatch, unknown operation, unknown key or vector
 * that could not be run.
 *
 * <p>List vectors (README section 10) run in every {@link ListForm} instead: each form
 * computes the diff with its batch and script, and the moveThenReload batch, through one
 * factory of {@code io.diffuser.list.ListDiff}, or through a {@code Diffuser.intoList}
 * node run with the old list and then the new one, and compares every array with the
 * vector.
 *
 * <p>A diffuser vector's values are {@link Val} objects: a JSON value with the vector's
 * equality in its {@code equals}, so that every gate's comparison is a call of user code
 * (as {@code previous.equals(new)}, through {@code Objects.equals}); each step's value is
 * parsed afresh and every selected part is a new object.
 *
 * <p>One file because one test reads the whole corpus once, runs each vector in every
 * form that applies and checks in one summary that every (vector, form) pair was run;
 * the diffuser, fuser and list runners here share its JSON reading, the
 * {@code Unsupported} reporting and the failure list. Loop vectors, which share only the
 * corpus walk, run in {@code LoopConformance}.
 */
public class ConformanceTest {
    /** Thrown by a user call whose label fails; must reach the caller of run unchanged. */
    static final class LabelFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String label;

        LabelFailure(String label) {
            super(label + " fails");
            this.label = label;
        }
    }

    static final class Unsupported extends Exception {
        private static final long serialVersionUID = 1L;
        Unsupported(String message) {
            super(message);
        }
    }

    /** The ways a tree is built with the Java API; every vector runs in each. */
    enum Form {
        API("the static factories over collections: intoAll(Collection), intoAlways(Collection), fromAll(Collection)"),
        ARRAYS("constructors and varargs: new Diffuser<>(children...), intoAlways(children...), fromAll(children...)");

        final String description;

        Form(String description) {
            this.description = description;
        }

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** What one step observes. */
    static final class StepState {
        List<List<Object>> log = new ArrayList<>();
        /** The step's fail list: labels whose every call fails, and {@code label@k} for a label's k-th call. */
        Set<String> failing = new HashSet<>();
        /** How many times each label was called in the step. */
        Map<String, Integer> calls = new HashMap<>();

        /** A user call labelled {@code label}: fails if listed, else logs {@code [label, value]}. */
        void call(String label, Object value) {
            int count = calls.merge(label, 1, Integer::sum);
            if (failing.contains(label) || failing.contains(label + "@" + count)) throw new LabelFailure(label);
            log.add(java.util.Arrays.asList(label, value));
        }

        <T> Effect<T> effect(String label) {
            return value -> call(label, value instanceof Val ? ((Val) value).json : value);
        }
    }

    // ---- Equality kinds (exactness extension, section 1) --------------------------------

    enum Equality { JSON, NEAR, NAN }

    static Equality equality(JsonObject vector) throws Unsupported {
        if (!vector.has("equality")) return Equality.JSON;
        String kind = vector.get("equality").getAsString();
        switch (kind) {
            case "json": return Equality.JSON;
            case "near": return Equality.NEAR;
            case "nan": return Equality.NAN;
            default: throw new Unsupported("unknown equality " + kind);
        }
    }

    /** The relation of {@code kind} on plain JSON values; no identity shortcut (NaN). */
    static boolean related(Equality kind, Object a, Object b) {
        if (a == null || b == null) return a == null && b == null;
        if (kind == Equality.NAN && ("NaN".equals(a) || "NaN".equals(b))) return false;
        if (a instanceof Long && b instanceof Long) {
            long x = (Long) a;
            long y = (Long) b;
            return kind == Equality.NEAR ? Math.abs(x - y) <= 1 : x == y;
        }
        if (a instanceof List && b instanceof List) {
            List<?> x = (List<?>) a;
            List<?> y = (List<?>) b;
            if (x.size() != y.size()) return false;
            for (int i = 0; i < x.size(); i++) if (!related(kind, x.get(i), y.get(i))) return false;
            return true;
        }
        if (a instanceof Map && b instanceof Map) {
            Map<?, ?> x = (Map<?, ?>) a;
            Map<?, ?> y = (Map<?, ?>) b;
            if (!x.keySet().equals(y.keySet())) return false;
            for (Map.Entry<?, ?> e : x.entrySet()) if (!related(kind, e.getValue(), y.get(e.getKey()))) return false;
            return true;
        }
        return a.equals(b); // Boolean, String; values of different JSON types differ
    }

    /**
     * A JSON value of a diffuser vector, never Java null (JSON null is {@code Val(null)}),
     * so that {@code Objects.equals(old, new)} always calls {@code old.equals(new)}. That
     * call fails when the new value, its argument, is the string "boom" (section 3).
     */
    static final class Val {
        final Object json;
        final Equality kind;

        Val(Object json, Equality kind) {
            this.json = json;
            this.kind = kind;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Val)) return false;
            Object other = ((Val) o).json;
            if ("boom".equals(other)) throw new LabelFailure("equality");
            return related(kind, json, other);
        }

        @Override
        public int hashCode() {
            return 0; // consistent with every kind (near is not an equivalence)
        }

        @Override
        public String toString() {
            return String.valueOf(json);
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
        if (p.isString()) return new String(p.getAsString()); // a fresh object, never shared between steps
        String text = p.getAsString();
        if (text.contains(".") || text.contains("e") || text.contains("E")) throw new Unsupported("float " + text);
        return Long.parseLong(text);
    }

    static Object not(Object x) {
        return x == null || Boolean.FALSE.equals(x);
    }

    static java.util.function.Function<Object, Object> selector(JsonObject s) throws Unsupported {
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

    static java.util.function.BiPredicate<Object, Object> decision(String name, Equality kind) throws Unsupported {
        switch (name) {
            case "changed": return (a, b) -> !related(kind, a, b); // never fails (section 3)
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

    /** Fails on a key that the op does not take. */
    static void keys(JsonObject node, String... allowed) throws Unsupported {
        Set<String> known = new HashSet<>(java.util.Arrays.asList(allowed));
        known.add("op");
        for (String key : node.keySet()) if (!known.contains(key)) throw new Unsupported("unknown key " + key + " in " + node);
    }

    static final class DiffuserBuilder {
        final JsonObject named;
        final StepState state;
        final Equality kind;
        final Form form;
        final Map<String, Diffuser<Val>> built = new HashMap<>();

        DiffuserBuilder(JsonObject named, StepState state, Equality kind, Form form) {
            this.named = named;
            this.state = state;
            this.kind = kind;
            this.form = form;
        }

        List<Diffuser<Val>> children(JsonObject node) throws Unsupported {
            List<Diffuser<Val>> list = new ArrayList<>();
            for (JsonElement c : node.getAsJsonArray("children")) list.add(build(c.getAsJsonObject()));
            return list;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        static Diffuser<Val>[] array(List<Diffuser<Val>> list) {
            return list.toArray(new Diffuser[0]);
        }

        Diffuser<Val> intoAll(List<Diffuser<Val>> children) {
            return form == Form.API ? Diffuser.intoAll(children) : new Diffuser<>(array(children));
        }

        Diffuser<Val> intoAlways(List<Diffuser<Val>> children) {
            return form == Form.API ? Diffuser.intoAlways(children) : Diffuser.intoAlways(array(children));
        }

        /** A map's transform: labelled, a user call that logs its input (section 4). */
        Function<Val, Val> mapTransform(java.util.function.Function<Object, Object> select, String label) {
            if (label == null) return v -> new Val(select.apply(v.json), kind);
            return v -> {
                state.call(label, v.json);
                return new Val(select.apply(v.json), kind);
            };
        }

        DidChange<Val> predicate(JsonObject node) throws Unsupported {
            java.util.function.BiPredicate<Object, Object> decide = decision(str(node, "predicate"), kind);
            String label = node.has("label") ? node.get("label").getAsString() : null;
            return (a, b) -> {
                if (label != null) state.call(label, java.util.Arrays.asList(a.json, b.json));
                return decide.test(a.json, b.json);
            };
        }

        Diffuser<Val> build(JsonObject node) throws Unsupported {
            String op = str(node, "op");
            switch (op) {
                case "ref": {
                    keys(node, "ref");
                    String name = str(node, "ref");
                    if (built.containsKey(name)) return built.get(name);
                    if (!named.has(name)) throw new Unsupported("unknown ref " + name);
                    Diffuser<Val> made = build(named.getAsJsonObject(name));
                    built.put(name, made);
                    return made;
                }
                case "intoAlways":
                    if (node.has("children")) {
                        keys(node, "children");
                        return intoAlways(children(node));
                    }
                    keys(node, "effect");
                    return Diffuser.intoAlways(state.effect(str(node, "effect")));
                case "into":
                    keys(node, "effect");
                    return Diffuser.into(state.effect(str(node, "effect")));
                case "intoOnce":
                    keys(node, "effect");
                    return Diffuser.intoOnce(state.effect(str(node, "effect")));
                case "intoAll":
                    keys(node, "children");
                    return intoAll(children(node));
                case "intoWhen": {
                    keys(node, "predicate", "label", node.has("child") ? "child" : "effect");
                    DidChange<Val> p = predicate(node);
                    return node.has("child") ? Diffuser.intoWhen(p, build(node.getAsJsonObject("child")))
                        : Diffuser.intoWhen(p, state.<Val>effect(str(node, "effect")));
                }
                case "map": {
                    keys(node, "selector", "child", "label");
                    String label = node.has("label") ? node.get("label").getAsString() : null;
                    return Diffuser.map(mapTransform(selector(node.getAsJsonObject("selector")), label),
                        build(node.getAsJsonObject("child")));
                }
                case "invert":
                    keys(node, "child");
                    return Diffuser.map(mapTransform(ConformanceTest::not, null), build(node.getAsJsonObject("child")));
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
        final Form form;
        final Map<String, Fuser<Object>> built = new HashMap<>();

        FuserBuilder(JsonObject named, Map<String, ScriptedSource> sources, Form form) {
            this.named = named;
            this.sources = sources;
            this.form = form;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        Fuser<Object> fromAll(List<Fuser<Object>> children) {
            return form == Form.API ? Fuser.fromAll(children) : Fuser.fromAll(children.toArray(new Fuser[0]));
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
                    return fromAll(list);
                }
                case "extract": return Fuser.extract(transform(str(node, "transform")), build(node.getAsJsonObject("child")));
                case "extractConstant": return Fuser.extractConstant(plain(node.get("constant")), build(node.getAsJsonObject("child")));
                case "extractUnlessNull": return Fuser.extractUnlessNull(transform(str(node, "transform")), build(node.getAsJsonObject("child")));
                default: throw new Unsupported("unknown fuser op " + op);
            }
        }
    }

    // ---- List vectors (README section 10) -------------------------------------------

    /** The ways the Java API computes a list diff; every list vector runs in each. */
    enum ListForm {
        OBJECT_KEYS("ListDiff.of(old, new, key, sameContent): key objects (Long, String), contents by a predicate"),
        EQUALS("ListDiff.of(old, new, key): key objects, contents by the items' equals"),
        LONG_KEYS("ListDiff.byLongKey(old, new, key, sameContent): each distinct key its own long"),
        FINGERPRINTS("ListDiff.ofKeys(oldKeys, oldContents, newKeys, newContents): keys and contents as longs"),
        INTO_LIST("Diffuser.intoList(key, sameContent, sink, parts), two runs: key objects by hashCode and equals"),
        INTO_LIST_LONG_KEYS("Diffuser.intoListByLongKey(key, sameContent, sink, parts), two runs: each distinct key its own long");

        final String description;

        ListForm(String description) {
            this.description = description;
        }

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** An item of a list vector: its key (Long or String) and its content (plain JSON). */
    static final class ListItem {
        final Object key;
        final Object content;

        ListItem(Object key, Object content) {
            this.key = key;
            this.content = content;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof ListItem && Objects.equals(key, ((ListItem) other).key)
                && Objects.equals(content, ((ListItem) other).content);
        }

        @Override
        public int hashCode() {
            return Objects.hash(key, content);
        }
    }

    static List<ListItem> listItems(JsonObject vector, String side) throws Unsupported {
        if (!vector.has(side) || !vector.get(side).isJsonArray()) throw new Unsupported(side + " is not an array");
        List<ListItem> items = new ArrayList<>();
        for (JsonElement e : vector.getAsJsonArray(side)) {
            if (!e.isJsonArray() || e.getAsJsonArray().size() != 2) throw new Unsupported("item " + e + " is not [key, content]");
            Object key = plain(e.getAsJsonArray().get(0));
            if (!(key instanceof Long || key instanceof String)) throw new Unsupported("key " + key + " is neither an integer nor a string");
            items.add(new ListItem(key, plain(e.getAsJsonArray().get(1))));
        }
        return items;
    }

    /** A JSON array of integers, or of pairs or steps flattened, as an int[]. */
    static int[] ints(JsonElement e, String what) throws Unsupported {
        if (e == null || !e.isJsonArray()) throw new Unsupported(what + " is not an array");
        List<Integer> values = new ArrayList<>();
        for (JsonElement x : e.getAsJsonArray()) {
            if (x.isJsonArray()) {
                for (JsonElement y : x.getAsJsonArray()) values.add(intOrStep(y, what));
            } else {
                values.add(intOrStep(x, what));
            }
        }
        int[] result = new int[values.size()];
        for (int i = 0; i < result.length; i++) result[i] = values.get(i);
        return result;
    }

    static int intOrStep(JsonElement e, String what) throws Unsupported {
        if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
            switch (e.getAsString()) {
                case "remove": return io.diffuser.list.ListScript.REMOVE;
                case "move": return io.diffuser.list.ListScript.MOVE;
                case "insert": return io.diffuser.list.ListScript.INSERT;
                case "change": return io.diffuser.list.ListScript.CHANGE;
                default: throw new Unsupported(what + ": unknown step kind " + e);
            }
        }
        Object value = plain(e);
        if (!(value instanceof Long)) throw new Unsupported(what + ": " + e + " is not an integer");
        return ((Long) value).intValue();
    }

    static final Set<String> LIST_VECTOR_KEYS = new HashSet<>(Arrays.asList("format", "name", "kind", "description", "old", "new", "expect"));
    static final Set<String> LIST_EXPECT_KEYS = new HashSet<>(Arrays.asList("deletes", "inserts", "moves", "updates", "oldToNew",
        "newToOld", "hasDuplicates", "batch", "batchMoveThenReload", "script"));
    static final Set<String> LIST_BATCH_KEYS = new HashSet<>(Arrays.asList("deletes", "inserts", "moves", "reloads", "reloadsAfterMoves"));

    static void expectListKeys(JsonObject object, Set<String> keys, String what) throws Unsupported {
        if (!object.keySet().equals(keys)) throw new Unsupported(what + " has keys " + object.keySet() + ", expected " + keys);
    }

    static String compareInts(String what, int[] got, JsonElement expected) throws Unsupported {
        int[] want = ints(expected, what);
        return Arrays.equals(got, want) ? null : what + "\n  got      " + Arrays.toString(got) + "\n  expected " + Arrays.toString(want);
    }

    static String compareDiff(ListDiff diff, JsonObject expect, int oldCount, int newCount) throws Unsupported {
        if (diff.oldCount != oldCount || diff.newCount != newCount) return "counts " + diff.oldCount + " -> " + diff.newCount;
        String[] names = {"deletes", "inserts", "moves", "updates", "oldToNew", "newToOld"};
        int[][] got = {diff.deletes, diff.inserts, diff.moves, diff.updates, diff.oldToNew, diff.newToOld};
        for (int k = 0; k < names.length; k++) {
            String mismatch = compareInts(names[k], got[k], expect.get(names[k]));
            if (mismatch != null) return mismatch;
        }
        if (diff.hasDuplicates != expect.get("hasDuplicates").getAsBoolean()) return "hasDuplicates " + diff.hasDuplicates;
        return null;
    }

    static String compareBatch(ListBatch batch, JsonObject expect, String name, boolean moveThenReload) throws Unsupported {
        if (batch == null) return name + ": no batch";
        if (batch.moveThenReload != moveThenReload) return name + ": moveThenReload " + batch.moveThenReload;
        JsonObject want = expect.getAsJsonObject(name);
        expectListKeys(want, LIST_BATCH_KEYS, "expect." + name);
        String[] names = {"deletes", "inserts", "moves", "reloads", "reloadsAfterMoves"};
        int[][] got = {batch.deletes, batch.inserts, batch.moves, batch.reloads, batch.reloadsAfterMoves};
        for (int k = 0; k < names.length; k++) {
            String mismatch = compareInts(name + "." + names[k], got[k], want.get(names[k]));
            if (mismatch != null) return mismatch;
        }
        return null;
    }

    /** Runs one list vector in one form; returns a description of the first mismatch, or null. */
    static String runListVector(JsonObject vector, ListForm form) throws Unsupported {
        expectListKeys(vector, LIST_VECTOR_KEYS, "the list vector");
        JsonObject expect = vector.getAsJsonObject("expect");
        expectListKeys(expect, LIST_EXPECT_KEYS, "expect");
        List<ListItem> olds = listItems(vector, "old");
        List<ListItem> news = listItems(vector, "new");
        // Each distinct key and content its own long, spread over the 64 bits.
        Map<Object, Long> numbers = new HashMap<>();
        java.util.function.ToLongFunction<Object> number = x -> {
            Long n = numbers.get(x);
            if (n == null) {
                n = (numbers.size() + 1) * 0x9E3779B97F4A7C15L;
                numbers.put(x, n);
            }
            return n;
        };
        ListDiff.Part[][] calls = {{ListDiff.Part.BATCH, ListDiff.Part.SCRIPT}, {ListDiff.Part.BATCH_MOVE_THEN_RELOAD}};
        for (ListDiff.Part[] parts : calls) {
            ListDiff diff;
            switch (form) {
                case OBJECT_KEYS:
                    diff = ListDiff.of(olds, news, item -> item.key, (a, b) -> Objects.equals(a.content, b.content), parts);
                    break;
                case EQUALS:
                    diff = ListDiff.of(olds, news, item -> item.key, parts);
                    break;
                case LONG_KEYS:
                    diff = ListDiff.byLongKey(olds, news, item -> number.applyAsLong(item.key),
                        (a, b) -> Objects.equals(a.content, b.content), parts);
                    break;
                case INTO_LIST:
                case INTO_LIST_LONG_KEYS: {
                    List<ListDiff> seen = new ArrayList<>();
                    List<List<ListItem>> lists = new ArrayList<>();
                    ListSink<ListItem> sink = (changes, list) -> {
                        seen.add(changes);
                        lists.add(list);
                    };
                    Diffuser<List<ListItem>> node = form == ListForm.INTO_LIST
                        ? Diffuser.intoList((ListItem item) -> item.key, (a, b) -> Objects.equals(a.content, b.content), sink, parts)
                        : Diffuser.intoListByLongKey((ListItem item) -> number.applyAsLong(item.key),
                            (a, b) -> Objects.equals(a.content, b.content), sink, parts);
                    node.run(olds);
                    if (seen.size() != 1 || lists.get(0) != olds || seen.get(0).oldCount != 0
                        || seen.get(0).inserts.length != olds.size()) {
                        return Arrays.toString(parts) + ": the first run is not every item inserted";
                    }
                    node.run(news);
                    boolean empty = true;
                    for (String part : new String[] {"deletes", "inserts", "moves", "updates"}) {
                        empty &= expect.getAsJsonArray(part).size() == 0;
                    }
                    if (empty) {
                        if (seen.size() != 1) return Arrays.toString(parts) + ": an empty diff called the sink";
                        continue;
                    }
                    if (seen.size() != 2 || lists.get(1) != news) {
                        return Arrays.toString(parts) + ": the second run did not hand the sink the new list";
                    }
                    diff = seen.get(1);
                    break;
                }
                default: {
                    long[][] keys = new long[4][];
                    List<List<ListItem>> sides = Arrays.asList(olds, news);
                    for (int s = 0; s < 2; s++) {
                        List<ListItem> side = sides.get(s);
                        keys[2 * s] = new long[side.size()];
                        keys[2 * s + 1] = new long[side.size()];
                        for (int i = 0; i < side.size(); i++) {
                            keys[2 * s][i] = number.applyAsLong(Arrays.asList("key", side.get(i).key));
                            keys[2 * s + 1][i] = number.applyAsLong(Arrays.asList("content", side.get(i).content));
                        }
                    }
                    diff = ListDiff.ofKeys(keys[0], keys[1], keys[2], keys[3], parts);
                    break;
                }
            }
            String call = Arrays.toString(parts) + ": ";
            String mismatch = compareDiff(diff, expect, olds.size(), news.size());
            boolean moveThenReload = parts[0] == ListDiff.Part.BATCH_MOVE_THEN_RELOAD;
            if (mismatch == null) {
                mismatch = compareBatch(diff.batch, expect, moveThenReload ? "batchMoveThenReload" : "batch", moveThenReload);
            }
            if (mismatch == null && !moveThenReload) {
                mismatch = diff.script == null ? "no script" : compareInts("script", diff.script.steps, expect.get("script"));
            }
            if (mismatch == null && moveThenReload && diff.script != null) mismatch = "a script that was not asked for";
            if (mismatch != null) return call + mismatch;
        }
        return null;
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

    /** Runs one vector in one form; returns a description of the first mismatch, or null. */
    static String runVector(JsonObject vector, Form form) throws Unsupported {
        StepState state = new StepState();
        JsonObject named = vector.has("nodes") ? vector.getAsJsonObject("nodes") : new JsonObject();
        JsonArray steps = vector.getAsJsonArray("steps");
        String kind = str(vector, "kind");
        if (kind.equals("diffuser")) {
            Equality equality = equality(vector);
            Diffuser<Val> diffuser = new DiffuserBuilder(named, state, equality, form).build(vector.getAsJsonObject("root"));
            for (int i = 0; i < steps.size(); i++) {
                JsonObject step = steps.get(i).getAsJsonObject();
                if (!step.has("run")) throw new Unsupported("diffuser step without run");
                state.log = new ArrayList<>();
                state.failing = failSet(step);
                state.calls.clear();
                String error = null;
                Val value = new Val(plain(step.get("run")), equality); // parsed afresh: a new object
                try {
                    diffuser.run(value);
                } catch (LabelFailure failure) {
                    error = failure.label;
                }
                String mismatch = check(i, step, state, error);
                if (mismatch != null) return mismatch;
            }
        } else if (kind.equals("fuser")) {
            if (vector.has("equality")) throw new Unsupported("equality in a fuser vector");
            Map<String, ScriptedSource> sources = new HashMap<>();
            for (JsonElement s : vector.getAsJsonArray("sources")) sources.put(s.getAsString(), new ScriptedSource(s.getAsString(), state));
            Fuser<Object> fuser = new FuserBuilder(named, sources, form).build(vector.getAsJsonObject("root"));
            Map<String, Disposable> connections = new HashMap<>();
            try {
                for (int i = 0; i < steps.size(); i++) {
                    JsonObject step = steps.get(i).getAsJsonObject();
                    state.log = new ArrayList<>();
                    state.failing = failSet(step);
                    state.calls.clear();
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
        // Each vector is read, run in every form and dropped before the next is read, so
        // the corpus can grow without the heap growing with it.
        List<String> failures = new ArrayList<>();
        Map<Form, Integer> executed = new LinkedHashMap<>();
        for (Form form : Form.values()) executed.put(form, 0);
        Map<ListForm, Integer> listExecuted = new LinkedHashMap<>();
        for (ListForm form : ListForm.values()) listExecuted.put(form, 0);
        int pairs = 0;
        int passed = 0;
        int lists = 0;
        int loops = 0;
        int loopPassed = 0;
        for (Path file : files) {
            JsonObject vector;
            try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                vector = JsonParser.parseReader(reader).getAsJsonObject();
            } catch (Exception e) {
                failures.add(file.getFileName() + ": could not read: " + e);
                continue;
            }
            if (isLoop(vector)) {
                // Loop vectors (README 11) run once each, on io.diffuser.loop (LoopConformance).
                loops++;
                String where = file.getFileName() + " [loop]";
                try {
                    String mismatch = LoopConformance.run(vector);
                    if (mismatch == null) loopPassed++;
                    else failures.add(where + ": " + mismatch);
                } catch (Exception e) {
                    failures.add(where + ": could not run: " + e);
                }
            } else if (isList(vector)) {
                // List vectors (README 10) run in the list forms instead.
                lists++;
                for (ListForm form : ListForm.values()) {
                    String where = file.getFileName() + " [" + form.label() + "]";
                    try {
                        String mismatch = runListVector(vector, form);
                        if (mismatch == null) passed++;
                        else failures.add(where + ": " + mismatch);
                    } catch (Exception e) {
                        failures.add(where + ": could not run: " + e);
                    }
                    listExecuted.merge(form, 1, Integer::sum);
                    pairs++;
                }
            } else {
                for (Form form : Form.values()) {
                    String where = file.getFileName() + " [" + form.label() + "]";
                    try {
                        String mismatch = runVector(vector, form);
                        if (mismatch == null) passed++;
                        else failures.add(where + ": " + mismatch);
                    } catch (Exception e) {
                        failures.add(where + ": could not run: " + e);
                    }
                    executed.merge(form, 1, Integer::sum);
                    pairs++;
                }
            }
        }
        StringBuilder summary = new StringBuilder();
        summary.append("Conformance (Java): ").append(files.size()).append(" vectors, ").append(pairs)
            .append(" (vector, form) pairs executed, 0 not applicable\n");
        for (Map.Entry<Form, Integer> e : executed.entrySet()) {
            summary.append("  form ").append(e.getKey().label()).append(" (").append(e.getKey().description)
                .append("): ").append(e.getValue()).append(" executed\n");
        }
        summary.append("  list vectors: ").append(lists).append(", each in ").append(ListForm.values().length).append(" forms\n");
        for (Map.Entry<ListForm, Integer> e : listExecuted.entrySet()) {
            summary.append("  list form ").append(e.getKey().label()).append(" (").append(e.getKey().description)
                .append("): ").append(e.getValue()).append(" executed\n");
        }
        summary.append("  loop vectors: ").append(loops).append(" executed (").append(loopPassed).append(" passed)\n");
        summary.append("  pairs: ").append(passed).append(" passed, ").append(pairs - passed).append(" failed\n");
        System.out.print(summary);
        String report = System.getProperty("diffuser.conformanceReport");
        if (report != null) Files.write(Paths.get(report), summary.toString().getBytes(StandardCharsets.UTF_8));
        if (!failures.isEmpty()) fail(failures.size() + " failures, first: " + failures.get(0) + (failures.size() > 1 ? "\nsecond: " + failures.get(1) : ""));
        assertEquals(pairs, passed);
        assertEquals((files.size() - lists - loops) * Form.values().length + lists * ListForm.values().length, pairs);
        assertEquals(loops, loopPassed);
        assertTrue("the loop vectors are incomplete: " + loops, loops >= 150);
        assertTrue("the list vectors are incomplete: " + lists, lists >= 120);
    }

    static boolean isLoop(JsonObject vector) {
        return vector.has("kind") && "loop".equals(vector.get("kind").getAsString());
    }

    static boolean isList(JsonObject vector) {
        return vector.has("kind") && "list".equals(vector.get("kind").getAsString());
    }
}
