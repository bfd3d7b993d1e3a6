package io.diffuser;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.diffuser.fuser.Disposable;
import io.diffuser.loop.Feedback;
import io.diffuser.loop.Job;
import io.diffuser.loop.Journal;
import io.diffuser.loop.LoopRefusedException;
import io.diffuser.loop.Loop;
import io.diffuser.loop.LoopTrace;
import io.diffuser.loop.ManualExecutor;
import io.diffuser.loop.Next;
import io.diffuser.loop.Overlap;
import io.diffuser.loop.Update;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Java runner of the loop vectors (conformance/README.md, section 11), called by
 * {@link ConformanceTest} for every vector of kind "loop".
 *
 * <p>One file although over 400 lines: it interprets one script format (README 11), whose
 * actions, rules and expectations refer to one another, against one loop at a time.
 *
 * <p>Values are gson {@link JsonElement}s (their {@code equals} is the JSON equality of
 * README section 2 for this corpus). The loop is a {@link Loop} built with the vector's
 * handlers, executor ({@link ManualExecutor}), coalescing keys, an inspector and, if the
 * vector asks, a {@link Journal}, the vector's {@code feedbacks}
 * ({@link Loop.Builder#feedback(Feedback)}) and its optional {@code restart}
 * ({@link Loop.Builder#restart}); observers are {@link Loop#observe(Effect)}, feedbacks
 * {@link Feedback#work(Overlap, java.util.concurrent.Executor, io.diffuser.loop.FeedbackWork)}.
 * The callbacks only interpret the vocabulary and log; every behaviour is the library's.
 */
final class LoopConformance {
  /** A failing update, handler or observer. */
  static final class ScriptedFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ScriptedFailure() {
      super("scripted failure");
    }
  }

  static final Set<String> VECTOR_KEYS = new HashSet<>(Arrays.asList("format", "name", "kind", "description", "model",
      "startEffects", "executor", "executors", "coalesce", "journal", "handlers", "feedbacks", "restart", "steps"));
  /** The members of a restart rule's result. */
  static final Set<String> RESTART_KEYS = new HashSet<>(Arrays.asList("set", "emit", "loop"));
  static final List<String> STEP_KINDS = Arrays.asList("dispatch", "observe", "unobserve", "feedback", "remove", "send",
      "cancel", "finish", "run", "runAll", "start", "stop", "dispose", "replay");
  static final Set<String> STEP_KEYS = new HashSet<>(Arrays.asList("expect", "comment", "event", "rules", "overlap",
      "executor"));

  private final JsonObject vector;
  private final JsonArray log = new JsonArray();
  private final Map<String, ManualExecutor> executors = new HashMap<>();
  private final Map<String, Disposable> registrations = new HashMap<>();
  private final Map<String, Job<JsonElement>> jobs = new HashMap<>();
  private Loop<JsonElement, JsonElement, JsonElement> loop;
  private Journal<JsonElement, JsonElement> journal;
  private final Update<JsonElement, JsonElement, JsonElement> update = this::update;

  private LoopConformance(JsonObject vector) {
    this.vector = vector;
  }

  /** Runs one loop vector; the first mismatch, or null. */
  static String run(JsonObject vector) throws ConformanceTest.Unsupported {
    return new LoopConformance(vector).run();
  }

  private void record(Object... parts) {
    JsonArray entry = new JsonArray();
    for (Object part : parts) {
      entry.add(part instanceof String ? new JsonPrimitive((String) part) : (JsonElement) part);
    }
    log.add(entry);
  }

  /** The update of README 11.2. */
  private Next<JsonElement, JsonElement> update(JsonElement model, JsonElement event) {
    record("update", event, model);
    JsonObject e = event.getAsJsonObject();
    if (e.has("fail")) {
      throw new ScriptedFailure();
    }
    List<JsonElement> effects = new java.util.ArrayList<>();
    if (e.has("emit")) {
      for (JsonElement effect : e.getAsJsonArray("emit")) {
        effects.add(effect);
      }
    }
    if (e.has("set")) {
      return Next.next(e.get("set"), effects);
    }
    if (e.has("add")) {
      return Next.next(new JsonPrimitive(model.getAsLong() + e.get("add").getAsLong()), effects);
    }
    return Next.dispatch(effects.toArray(new JsonElement[0]));
  }

  /**
   * The vector's restart, called at every start after the loop's first with the kept
   * model: logs {@code ["restart", model]}, then takes the result of the first rule that
   * matches the model (none: {@code {}}): the run's first model is its {@code set}, or the
   * kept model; its start effects are its {@code emit}; its {@code loop} (stop or dispose)
   * is called from inside the restart.
   */
  private Next<JsonElement, JsonElement> restart(JsonElement rules, JsonElement model) {
    record("restart", model);
    JsonElement chosen = choose(rules, model);
    JsonObject result = chosen == null ? new JsonObject() : chosen.getAsJsonObject();
    List<JsonElement> effects = new java.util.ArrayList<>();
    if (result.has("emit")) {
      for (JsonElement effect : result.getAsJsonArray("emit")) {
        effects.add(effect);
      }
    }
    if (result.has("loop")) {
      if (result.get("loop").getAsString().equals("stop")) {
        loop.stop();
      } else {
        loop.dispose();
      }
    }
    return result.has("set") ? Next.next(result.get("set"), effects) : Next.dispatch(effects.toArray(new JsonElement[0]));
  }

  /** Checks the vector's {@code restart} rules before the loop is made. */
  private static void checkRestart(JsonElement rules) throws ConformanceTest.Unsupported {
    if (!rules.isJsonArray()) {
      throw new ConformanceTest.Unsupported("restart: not null nor an array of rules");
    }
    for (JsonElement rule : rules.getAsJsonArray()) {
      if (!rule.isJsonArray() || rule.getAsJsonArray().size() != 2) {
        throw new ConformanceTest.Unsupported("restart: a rule is not [match, result]: " + rule);
      }
      JsonElement match = rule.getAsJsonArray().get(0);
      JsonElement result = rule.getAsJsonArray().get(1);
      if (!match.isJsonNull() && !isInteger(match)) {
        throw new ConformanceTest.Unsupported("restart: a match is not an integer nor null: " + match);
      }
      if (!result.isJsonObject()) {
        throw new ConformanceTest.Unsupported("restart: a result is not an object: " + result);
      }
      JsonObject r = result.getAsJsonObject();
      for (String key : r.keySet()) {
        if (!RESTART_KEYS.contains(key)) {
          throw new ConformanceTest.Unsupported("restart: unknown result key " + key);
        }
      }
      if (r.has("set") && !isInteger(r.get("set"))) {
        throw new ConformanceTest.Unsupported("restart: set is not an integer: " + r.get("set"));
      }
      if (r.has("emit") && !r.get("emit").isJsonArray()) {
        throw new ConformanceTest.Unsupported("restart: emit is not an array: " + r.get("emit"));
      }
      if (r.has("loop") && !(r.get("loop").equals(new JsonPrimitive("stop"))
          || r.get("loop").equals(new JsonPrimitive("dispose")))) {
        throw new ConformanceTest.Unsupported("restart: loop is not \"stop\" nor \"dispose\": " + r.get("loop"));
      }
    }
  }

  private static boolean isInteger(JsonElement value) {
    if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
      return false;
    }
    java.math.BigDecimal number = value.getAsBigDecimal();
    return number.signum() == 0 || number.stripTrailingZeros().scale() <= 0;
  }

  /** What a scripted callback does once called and logged (README 11.3). */
  private void act(String label, JsonElement action, Job<JsonElement> job) {
    JsonObject a = action instanceof JsonObject ? (JsonObject) action : new JsonObject();
    if (a.has("fail")) {
      throw new ScriptedFailure();
    }
    if (a.has("send")) {
      for (JsonElement event : a.getAsJsonArray("send")) {
        boolean accepted = job != null ? job.send(event) : loop.dispatch(event);
        if (!accepted) {
          record("refused", label, event);
        }
      }
    }
    if (a.has("dispatch")) {
      for (JsonElement event : a.getAsJsonArray("dispatch")) {
        if (!loop.dispatch(event)) {
          record("refused", label, event);
        }
      }
    }
    if (job != null) {
      if (a.has("hold")) {
        String name = a.get("hold").getAsString();
        jobs.put(name, job);
        job.onCancel(() -> record("cancelled", name));
      } else {
        job.finish();
      }
    }
    if (a.has("cancel") && jobs.containsKey(a.get("cancel").getAsString())) {
      jobs.get(a.get("cancel").getAsString()).cancel();
    }
    if (a.has("loop")) {
      JsonElement calls = a.get("loop");
      JsonArray list = calls.isJsonArray() ? calls.getAsJsonArray() : new JsonArray();
      if (!calls.isJsonArray()) {
        list.add(calls);
      }
      for (JsonElement call : list) {
        switch (call.getAsString()) {
          case "stop":
            loop.stop();
            break;
          case "start":
            loop.start();
            break;
          case "dispose":
            loop.dispose();
            break;
          default:
            throw new IllegalArgumentException("unknown loop call " + call);
        }
      }
    }
  }

  /** The action of the first rule matching {@code model}, or null. */
  private static JsonElement choose(JsonElement rules, JsonElement model) {
    for (JsonElement rule : rules.getAsJsonArray()) {
      JsonElement match = rule.getAsJsonArray().get(0);
      if (match.isJsonNull() || match.equals(model)) {
        return rule.getAsJsonArray().get(1);
      }
    }
    return null;
  }

  private void inspect(LoopTrace<JsonElement, JsonElement, JsonElement> trace) {
    switch (trace.kind()) {
      case STARTED:
        record("trace", "started", trace.model(), array(trace.effects()));
        break;
      case STEPPED:
        record("trace", "stepped", trace.event(), trace.model(),
            trace.hasNextModel() ? trace.nextModel() : JsonNull.INSTANCE, array(trace.effects()));
        break;
      case FAILED:
        record("trace", "failed", trace.event(), trace.model());
        break;
      case DROPPED:
        String[] reasons = {"cancelledWork", "coalesced", "stopped", "disposed"};
        record("trace", "dropped", trace.event(), reasons[trace.reason().ordinal()]);
        break;
      case EFFECT_FAILED:
        record("trace", "effectFailed", trace.effect());
        break;
      case OBSERVER_FAILED:
        record("trace", "observerFailed");
        break;
      case STOPPED:
        record("trace", "stopped", trace.model());
        break;
      case SOURCE_FAILED:
        record("trace", "sourceFailed");
        break;
      case FEEDBACK_FAILED:
        record("trace", "feedbackFailed");
        break;
      default:
        record("trace", "disposed", trace.model());
        break;
    }
  }

  private static JsonArray array(List<JsonElement> values) {
    JsonArray array = new JsonArray();
    values.forEach(array::add);
    return array;
  }

  private ManualExecutor executor(JsonElement name) throws ConformanceTest.Unsupported {
    if (name == null || name.isJsonNull()) {
      return null;
    }
    ManualExecutor executor = executors.get(name.getAsString());
    if (executor == null) {
      throw new ConformanceTest.Unsupported("unknown executor " + name);
    }
    return executor;
  }

  /**
   * The work feedback {@code label} of a {@code feedback} step or a {@code feedbacks}
   * entry (README 11.3): its {@code overlap}, {@code executor} and {@code rules}.
   */
  private Feedback<JsonElement, JsonElement> feedback(String label, JsonObject spec)
      throws ConformanceTest.Unsupported {
    JsonElement rules = spec.get("rules");
    Overlap overlap;
    switch (spec.get("overlap").getAsString()) {
      case "cancelPrevious": overlap = Overlap.CANCEL_PREVIOUS; break;
      case "keepPrevious": overlap = Overlap.KEEP_PREVIOUS; break;
      case "concurrent": overlap = Overlap.CONCURRENT; break;
      default: throw new ConformanceTest.Unsupported("unknown overlap " + spec.get("overlap"));
    }
    return Feedback.<JsonElement, JsonElement>work(overlap, executor(spec.get("executor")), (model, job) -> {
      record("feedback", label, model);
      act(label, choose(rules, model), job);
    });
  }

  private String run() throws ConformanceTest.Unsupported {
    for (String key : vector.keySet()) {
      if (!VECTOR_KEYS.contains(key)) {
        throw new ConformanceTest.Unsupported("loop vector: unknown key " + key);
      }
    }
    for (JsonElement name : vector.getAsJsonArray("executors")) {
      executors.put(name.getAsString(), new ManualExecutor());
    }
    Loop.Builder<JsonElement, JsonElement, JsonElement> builder = Loop.builder(vector.get("model"), update)
        .inspector(this::inspect)
        .manualStart();
    for (JsonElement effect : vector.getAsJsonArray("startEffects")) {
      builder.startEffects(effect);
    }
    for (JsonElement h : vector.getAsJsonArray("handlers")) {
      String label = h.getAsJsonObject().get("label").getAsString();
      builder.handler(executor(h.getAsJsonObject().get("executor")), (effect, job) -> {
        record("handle", label, effect);
        JsonObject actions = effect.getAsJsonObject().getAsJsonObject("do");
        act(label, actions == null ? null : actions.get(label), job);
      });
    }
    ManualExecutor loopExecutor = executor(vector.get("executor"));
    if (loopExecutor != null) {
      builder.executor(loopExecutor);
    }
    if (vector.get("coalesce").getAsBoolean()) {
      builder.coalescing(event -> {
        JsonElement key = event.getAsJsonObject().get("key");
        return key == null ? null : key.getAsString();
      });
    }
    // The feedbacks given at creation (README 11.1, 11.6), in order; no step removes them.
    for (JsonElement f : vector.getAsJsonArray("feedbacks")) {
      JsonObject spec = f.getAsJsonObject();
      builder.feedback(feedback(spec.get("label").getAsString(), spec));
    }
    // The restart (optional key): absent or null for none.
    JsonElement restartRules = vector.get("restart");
    if (restartRules != null && !restartRules.isJsonNull()) {
      checkRestart(restartRules);
      builder.restart(model -> restart(restartRules, model));
    }
    if (vector.get("journal").getAsBoolean()) {
      journal = new Journal<>();
      builder.journal(journal);
    }
    loop = builder.build();
    try {
      JsonArray steps = vector.getAsJsonArray("steps");
      for (int i = 0; i < steps.size(); i++) {
        while (log.size() > 0) {
          log.remove(0);
        }
        JsonObject step = steps.get(i).getAsJsonObject();
        JsonObject got = step(step);
        String mismatch = compare(i, step, got);
        if (mismatch != null) {
          return mismatch;
        }
      }
      return null;
    } finally {
      loop.dispose();
      for (ManualExecutor executor : executors.values()) {
        executor.runAll();
      }
      for (Disposable registration : registrations.values()) {
        registration.dispose();
      }
    }
  }

  private JsonObject step(JsonObject step) throws ConformanceTest.Unsupported {
    String kind = null;
    for (String key : step.keySet()) {
      if (STEP_KINDS.contains(key)) {
        if (kind != null) {
          throw new ConformanceTest.Unsupported("a step with both " + kind + " and " + key);
        }
        kind = key;
      } else if (!STEP_KEYS.contains(key)) {
        throw new ConformanceTest.Unsupported("unknown step key " + key);
      }
    }
    if (kind == null) {
      throw new ConformanceTest.Unsupported("a step of no known kind: " + step);
    }
    JsonElement value = step.get(kind);
    String label = value.isJsonPrimitive() && value.getAsJsonPrimitive().isString() ? value.getAsString() : null;
    JsonElement result = JsonNull.INSTANCE;
    JsonObject got = new JsonObject();
    switch (kind) {
      case "dispatch":
        try {
          loop.tryDispatch(step.get("event"));
          result = new JsonPrimitive("ok");
        } catch (LoopRefusedException refused) {
          result = new JsonPrimitive(refused.isDisposed() ? "disposed" : "stopped");
        }
        break;
      case "observe": {
        JsonElement rules = step.get("rules");
        registrations.put(label, loop.observe(model -> {
          record("observe", label, model);
          act(label, choose(rules, model), null);
        }));
        break;
      }
      case "feedback":
        registrations.put(label, loop.add(feedback(label, step)));
        break;
      case "unobserve":
      case "remove":
        registration(label).dispose();
        break;
      case "send":
        result = new JsonPrimitive(job(label).send(step.get("event")));
        break;
      case "cancel":
        job(label).cancel();
        break;
      case "finish":
        job(label).finish();
        break;
      case "run":
        result = new JsonPrimitive(executor(value).runNext());
        break;
      case "runAll":
        result = new JsonPrimitive(executor(value).runAll());
        break;
      case "start":
        result = new JsonPrimitive(loop.start());
        break;
      case "stop":
        loop.stop();
        break;
      case "dispose":
        loop.dispose();
        break;
      case "replay": {
        if (journal == null) {
          throw new ConformanceTest.Unsupported("replay without a journal");
        }
        JsonArray entries = new JsonArray();
        for (Journal.Entry<JsonElement, JsonElement> entry : journal.entries()) {
          JsonArray pair = new JsonArray();
          pair.add(entry.isStart() ? "start" : "event");
          pair.add(entry.isStart() ? entry.model() : entry.event());
          entries.add(pair);
        }
        got.add("journal", entries);
        got.add("models", array(journal.replay(update)));
        break;
      }
      default:
        throw new ConformanceTest.Unsupported("unknown step kind " + kind);
    }
    got.add("log", log.deepCopy());
    got.add("result", result);
    got.add("model", loop.model());
    got.add("running", new JsonPrimitive(loop.isRunning()));
    return got;
  }

  private Disposable registration(String label) throws ConformanceTest.Unsupported {
    Disposable registration = registrations.get(label);
    if (registration == null) {
      throw new ConformanceTest.Unsupported("no registration " + label);
    }
    return registration;
  }

  private Job<JsonElement> job(String label) throws ConformanceTest.Unsupported {
    Job<JsonElement> job = jobs.get(label);
    if (job == null) {
      throw new ConformanceTest.Unsupported("no job held as " + label);
    }
    return job;
  }

  private static String compare(int index, JsonObject step, JsonObject got) {
    JsonObject expect = step.getAsJsonObject("expect");
    if (!expect.keySet().equals(got.keySet())) {
      return "step " + index + ": expect has keys " + expect.keySet() + ", the runner checks " + got.keySet();
    }
    for (String key : got.keySet()) {
      if (!got.get(key).equals(expect.get(key))) {
        return "step " + index + ": " + key + "\n  got      " + got.get(key) + "\n  expected " + expect.get(key);
      }
    }
    return null;
  }
}
