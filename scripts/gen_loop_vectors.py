"""The generated loop families: random loop vectors (conformance/README.md, 11.8).

gen_vectors.py calls generate_loop(seed, index) for conformance/loop/loop-NNNN.json and
generate_restart(seed, index) for conformance/loop/restart-NNNN.json, loops with a
restart. Vector i has its own random stream and follows scenario (i - 1) mod 9
(SCENARIOS), or (i - 1) mod 5 (RESTART_SCENARIOS) with a restart. A
vector is built one step at a time: after each candidate step the steps so far run on
the model (scripts/loop_model.py), so that the next step can use the loop's state (the
jobs held, the executors with work waiting), and a candidate whose callbacks keep
feeding the loop forever is dropped. The expectations come from the model.
"""

import json
import random

import loop_model

SCENARIOS = ("events", "reentrant", "executors", "overlap", "lifecycle", "coalescing", "cancellation",
             "journal", "mix")
# The scenarios of the vectors with a restart: those with stops and starts to restart.
RESTART_SCENARIOS = ("lifecycle", "executors", "journal", "overlap", "mix")


class Gen(object):
    def __init__(self, rng, scenario, restart=False):
        self.rng = rng
        self.scenario = scenario
        self.restart = restart  # a vector with a restart: more stops and starts, fewer disposes
        self.ids = 0
        self.handlers = []
        self.labels = []
        self.coalesce = scenario in ("coalescing", "mix") and rng.random() < 0.9
        self.keys = ["k", "m"]
        # Steps to try next: a send through a held job is often followed by its cancel,
        # so that queued events of cancelled work are dropped.
        self.plan = []

    def chance(self, p):
        return self.rng.random() < p

    def next_id(self):
        self.ids += 1
        return self.ids

    # -- values ------------------------------------------------------------------

    def event(self, depth):
        rng = self.rng
        event = {"id": self.next_id()}
        r = rng.random()
        if r < 0.55:
            event["add"] = rng.randint(-2, 3)
        elif r < 0.75:
            event["set"] = rng.randint(-3, 6)
        if self.chance(0.08 if self.scenario != "journal" else 0.2):
            event["fail"] = True
        if self.coalesce and self.chance(0.6):
            event["key"] = rng.choice(self.keys)
        if self.handlers and depth < 2 and self.chance(0.45 if depth == 0 else 0.2):
            event["emit"] = [self.effect(depth + 1) for _ in range(rng.randint(1, 2))]
        return event

    def effect(self, depth):
        effect = {"id": "e%d" % self.next_id()}
        actions = {}
        for handler in self.handlers:
            if self.chance(0.5):
                actions[handler["label"]] = self.action(depth, "handler")
        if actions:
            effect["do"] = actions
        return effect

    def action(self, depth, role):
        rng = self.rng
        action = {}
        if role != "feedback" and self.chance(0.08):
            return {"fail": True}
        if depth < 2 and self.chance(0.6):
            action["send"] = [self.event(depth + 1) for _ in range(rng.randint(1, 2))]
        if role != "observer" and depth < 2 and self.chance(0.08):
            action["dispatch"] = [self.event(depth + 1)]
        if role != "observer":
            hold = {"cancellation": 0.5, "overlap": 0.4}.get(self.scenario, 0.2)
            if self.chance(hold):
                action["hold"] = rng.choice(["J", "K", "J2"])
        if self.chance({"cancellation": 0.25}.get(self.scenario, 0.06)):
            action["cancel"] = rng.choice(["J", "K", "J2"])
        lifecycle = 0.08 if self.scenario == "lifecycle" else 0.02
        if self.chance(lifecycle):
            action["loop"] = rng.choice(["stop", "dispose", "start", ["stop", "start"], ["dispose", "start"],
                                         ["stop", "start", "stop"]])
        return action

    def rules(self, role):
        rules = []
        for _ in range(self.rng.randint(0, 2)):
            match = self.rng.choice([None, self.rng.randint(-1, 5)])
            rules.append([match, self.action(1, role)])
        return rules


def candidate(gen, vector, loop):
    """A random next step, given the model's loop after the steps so far."""
    rng = gen.rng
    sc = gen.scenario
    held = sorted(loop.jobs)
    if gen.plan:
        return gen.plan.pop(0)
    pending = [name for name in vector["executors"] if loop.executors[name]]
    weights = [
        ("dispatch", 6),
        ("run", 5 if pending else 0),
        ("runAll", 2 if pending else 0),
        ("observe", 2 if len(gen.labels) < 5 else 0),
        ("feedback", (4 if sc == "overlap" else 1.5) if len(gen.labels) < 5 else 0),
        ("send", (3 if sc == "cancellation" else 1.5) if held else 0),
        ("cancel", (2 if sc == "cancellation" else 0.7) if held else 0),
        ("finish", 0.8 if held else 0),
        ("start", (8 if gen.restart else 2.5) if loop.status == "stopped" else 0.2),
        ("stop", 4 if gen.restart else 1.2 if sc == "lifecycle" else 0.3),
        ("dispose", 0.1 if gen.restart or sc != "lifecycle" else 0.6),
        ("unobserve", 0.4 if any(isinstance(r, loop_model.Observer) for r in loop.registrations.values()) else 0),
        ("remove", 0.5 if any(isinstance(r, loop_model.FeedbackEntry) for r in loop.registrations.values()) else 0),
        ("replay", 1 if vector["journal"] else 0),
    ]
    total = sum(w for _, w in weights)
    r = rng.random() * total
    for kind, w in weights:
        r -= w
        if r < 0:
            break
    if kind == "dispatch":
        if sc in ("cancellation", "overlap") and vector["executor"] is not None and gen.chance(0.5):
            # Two events queued before the loop's turn: the first one's feedback work is
            # cancelled by the second's model while its event waits.
            gen.plan.append({"dispatch": True, "event": gen.event(0)})
            gen.plan.append({"runAll": vector["executor"]})
        return {"dispatch": True, "event": gen.event(0)}
    if kind in ("run", "runAll"):
        return {kind: rng.choice(pending)}
    if kind in ("observe", "feedback"):
        label = ("O%d" if kind == "observe" else "F%d") % (len(gen.labels) + 1)
        gen.labels.append(label)
        if kind == "observe":
            return {"observe": label, "rules": gen.rules("observer")}
        executors = vector["executors"]
        executor = rng.choice(executors) if executors and gen.chance(0.6 if sc == "overlap" else 0.3) else None
        overlap = rng.choice(loop_model.OVERLAPS)
        return {"feedback": label, "overlap": overlap, "executor": executor, "rules": gen.rules("feedback")}
    if kind in ("send", "cancel", "finish"):
        step = {kind: rng.choice(held)}
        if kind == "send":
            step["event"] = gen.event(0)
            if vector["executor"] is not None and gen.chance(0.6):
                gen.plan.append({"cancel": step["send"]})
                gen.plan.append({"runAll": vector["executor"]})
        return step
    if kind in ("unobserve", "remove"):
        cls = loop_model.Observer if kind == "unobserve" else loop_model.FeedbackEntry
        return {kind: rng.choice(sorted(k for k, v in loop.registrations.items() if isinstance(v, cls)))}
    return {kind: True}


def expectations(vector):
    """The vector with every step's expect filled in by the model, or None if the
    callbacks keep feeding the loop."""
    for step in vector["steps"]:
        step["expect"] = {"log": [], "result": None, "model": 0, "running": False}
    try:
        loop, outputs = loop_model.run_loop(vector)
    except loop_model.LoopVectorError as e:
        if "updates" in str(e) or "starts" in str(e) or "32-bit" in str(e):
            return None
        raise
    for step, out in zip(vector["steps"], outputs):
        step["expect"] = out
    return loop


def restartable(vector):
    """Whether a stop and a start, twice, after the steps so far would end. With a restart,
    the script restarts often: a step (a registration while stopped, mostly) after which
    every later run would keep feeding the loop is dropped, not every start after it."""
    steps = [dict(step) for step in vector["steps"]] + [{"stop": True}, {"start": True}] * 2
    return expectations(dict(vector, steps=steps)) is not None


def gen_loop(rng, name, index, restart=False):
    scenarios = RESTART_SCENARIOS if restart else SCENARIOS
    scenario = scenarios[(index - 1) % len(scenarios)]
    gen = Gen(rng, scenario, restart)
    executors = []
    manual_loop = scenario in ("coalescing", "cancellation") or (scenario != "events" and gen.chance(0.35))
    if manual_loop:
        executors.append("L")
    if scenario in ("executors", "overlap") or gen.chance(0.3):
        executors.append("X")
        if gen.chance(0.3):
            executors.append("Y")
    side = [e for e in executors if e != "L"]
    for i in range(rng.randint(1 if scenario != "events" else 0, 3)):
        on = rng.choice(side) if side and gen.chance(0.6 if scenario == "executors" else 0.25) else None
        gen.handlers.append({"label": "H%d" % (i + 1), "executor": on})
    vector = {
        "format": 1,
        "name": name,
        "kind": "loop",
        "description": ("Generated (scenario %s, with a restart): random events, callbacks, lifecycle steps "
                        "and restarts; expectations from scripts/loop_model.py." if restart else
                        "Generated (scenario %s): random events, callbacks and lifecycle steps; expectations "
                        "from scripts/loop_model.py.") % scenario,
        "model": rng.randint(-2, 3),
        "startEffects": [gen.effect(1) for _ in range(rng.randint(0, 1))] if gen.handlers else [],
        "executor": "L" if manual_loop else None,
        "executors": executors,
        "coalesce": gen.coalesce,
        "journal": scenario in ("journal", "mix", "lifecycle") or gen.chance(0.2),
        "handlers": gen.handlers,
        "feedbacks": creation_feedbacks(gen, index + (100003 if restart else 0), executors),
        "steps": [],
    }
    # With a restart, steps after which later runs would keep feeding the loop are
    # dropped (see restartable), unless the loop's first runs already do: then no step
    # would be kept. A restart whose own effects do is drawn again (ten times at most).
    guard_restarts = False
    if restart:
        for _ in range(10):
            vector["restart"] = restart_rules(gen)
            guard_restarts = restartable(vector)
            if guard_restarts:
                break
    loop = expectations(vector)

    def attempt(step, labels):
        vector["steps"].append(step)
        after = expectations(vector)
        if after is not None and guard_restarts and not restartable(vector):
            after = None
        if after is None:
            vector["steps"].pop()
            gen.labels = labels
        return after

    # Cancelled work: a feedback that holds its job and sends an event without a model on
    # every model; two events queued before a turn of the loop's executor make the first
    # model's work cancelled while its event is still queued.
    if scenario in ("cancellation", "overlap") and manual_loop:
        gen.labels.append("F0")
        loop = attempt({"feedback": "F0", "overlap": "cancelPrevious", "executor": None,
                        "rules": [[None, {"send": [{"id": gen.next_id()}], "hold": "W"}]]}, []) or loop

    # Registrations first, mostly, then the start, then a random script.
    for _ in range(rng.randint(0, 2)):
        labels = list(gen.labels)
        loop = attempt(candidate_registration(gen, vector), labels) or loop
    if gen.chance(0.9):
        loop = attempt({"start": True}, gen.labels) or loop
    target = rng.randint(12, 20) if restart else rng.randint(8, 16)
    attempts = 0
    while len(vector["steps"]) < target and attempts < 200:
        attempts += 1
        labels = list(gen.labels)
        loop = attempt(candidate(gen, vector, loop), labels) or loop
    if vector["journal"] and "replay" not in vector["steps"][-1]:
        vector["steps"].append({"replay": True})
    if expectations(vector) is None:
        raise SystemExit("internal error in %s: no finite script" % name)
    return vector


def restart_rules(gen):
    """The restart of a vector with one (README 11.1, 11.3): 0-3 rules on models near the
    loop's, whose results set a model, emit effects (with the handlers' actions), and
    now and then stop or dispose the loop from inside the restart."""
    rng = gen.rng
    rules = []
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
        match = None if gen.chance(0.5) else rng.randint(-2, 6)
        result = {}
        if gen.chance(0.6):
            result["set"] = rng.randint(-3, 8)
        if gen.handlers and gen.chance(0.6):
            result["emit"] = [gen.effect(1) for _ in range(rng.randint(1, 2))]
        if gen.chance(0.12):
            result["loop"] = "stop" if gen.chance(0.75) else "dispose"
        rules.append([match, result])
    return rules


def creation_feedbacks(gen, index, executors):
    """Feedbacks given at creation (README 11.1) for about a third of the vectors, drawn
    from a stream of their own (from `index`) so that the rest of each vector's script is
    drawn as without them. Labels `C1`, `C2`."""
    main, gen.rng = gen.rng, random.Random(index * 7919 + 17)
    feedbacks = []
    if gen.chance(0.35):
        for i in range(gen.rng.randint(1, 2)):
            side = [e for e in executors if e != "L"]
            executor = gen.rng.choice(side) if side and gen.chance(0.4) else None
            feedbacks.append({"label": "C%d" % (i + 1), "overlap": gen.rng.choice(loop_model.OVERLAPS),
                              "executor": executor, "rules": gen.rules("feedback")})
    gen.rng = main
    return feedbacks


def candidate_registration(gen, vector):
    label = ("O%d" if gen.chance(0.6) else "F%d") % (len(gen.labels) + 1)
    gen.labels.append(label)
    if label[0] == "O":
        return {"observe": label, "rules": gen.rules("observer")}
    side = vector["executors"]
    executor = gen.rng.choice(side) if side and gen.chance(0.4) else None
    return {"feedback": label, "overlap": gen.rng.choice(loop_model.OVERLAPS), "executor": executor,
            "rules": gen.rules("feedback")}


def generate_loop(seed, index):
    rng = random.Random(seed * 1000003 + index)
    return gen_loop(rng, "loop-%04d" % index, index)


def generate_restart(seed, index):
    """A loop vector with a restart: restart-NNNN, from its own seed's stream."""
    rng = random.Random(seed * 1000003 + index)
    return gen_loop(rng, "restart-%04d" % index, index, restart=True)


STEP_KEYS = ("dispatch", "observe", "unobserve", "feedback", "remove", "send", "cancel", "finish", "run", "runAll",
             "start", "stop", "dispose", "replay", "overlap", "executor", "rules", "event", "comment", "expect")
EXPECT_KEYS = ("log", "result", "model", "running", "journal", "models")


def format_loop_step(step):
    """One line: the step's keys in reading order, nested objects with sorted keys."""
    def dump(value):
        return json.dumps(value, sort_keys=True)
    parts = []
    for key in STEP_KEYS:
        if key not in step:
            continue
        if key == "expect":
            expect = step["expect"]
            value = "{" + ", ".join("%s: %s" % (dump(k), dump(expect[k])) for k in EXPECT_KEYS if k in expect) + "}"
        else:
            value = dump(step[key])
        parts.append("%s: %s" % (dump(key), value))
    assert len(parts) == len(step)
    return "{" + ", ".join(parts) + "}"


def format_loop_vector(vector):
    """Deterministic text: sorted keys, one line per step."""
    lines = ["{"]
    keys = sorted(vector)
    for n, key in enumerate(keys):
        comma = "," if n + 1 < len(keys) else ""
        if key == "steps":
            lines.append('  "steps": [')
            for i, step in enumerate(vector["steps"]):
                tail = "," if i + 1 < len(vector["steps"]) else ""
                lines.append("    " + format_loop_step(step) + tail)
            lines.append("  ]" + comma)
        else:
            lines.append("  %s: %s%s" % (json.dumps(key), json.dumps(vector[key], sort_keys=True), comma))
    lines.append("}")
    return "\n".join(lines) + "\n"
