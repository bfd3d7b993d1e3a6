"""Executable model of the Loop, for the "loop" conformance vectors (conformance/README.md,
section 11).

Independent of the library: it restates, in plain single-threaded Python, what the loop
promises (one entry of the queue at a time, first in first out; each step: update, store,
publish to observers and feedbacks in registration order, then effects to handlers in
list order; reentrant events queued; jobs and their cancellation; overlap strategies;
stop, start and dispose; the restart of every run after the first; coalescing; the
journal and its replay) and what the scripted
callbacks of a vector do. conformance_model.py calls validate_loop_vector and
run_loop_vector; scripts/gen_loop_vectors.py uses run_loop_vector to fill in expectations.

The expected output of a step is the list of user-visible calls it causes, in order
(README 11.5), its result, and the loop's model and running state afterwards.

One module because the validation and the model restate the same vocabulary of README
section 11 (events, actions, rules, steps): split, they would be two files to edit in
step for every change of the format.
"""

import re
from collections import deque

LABEL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
INT_LIMIT = 2 ** 31
OVERLAPS = ("cancelPrevious", "keepPrevious", "concurrent")
MAX_UPDATES = 400  # a vector whose callbacks keep feeding the loop is malformed


class LoopVectorError(Exception):
    """The loop vector is malformed."""


class UserFailure(Exception):
    """A scripted update, handler or observer failed (README 11.3)."""


# ---------------------------------------------------------------------------------------
# Validation


def _keys(obj, required, optional, where):
    if not isinstance(obj, dict):
        raise LoopVectorError("%s: expected an object" % where)
    missing = [k for k in required if k not in obj]
    if missing:
        raise LoopVectorError("%s: missing key(s) %s" % (where, ", ".join(missing)))
    unknown = sorted(k for k in obj if k not in required and k not in optional)
    if unknown:
        raise LoopVectorError("%s: unknown key(s) %s" % (where, ", ".join(unknown)))


def _label(value, where):
    if not isinstance(value, str) or not LABEL_RE.match(value):
        raise LoopVectorError("%s: bad label %r" % (where, value))


def _int(value, where):
    if isinstance(value, bool) or not isinstance(value, int) or not -INT_LIMIT <= value < INT_LIMIT:
        raise LoopVectorError("%s: expected a 32-bit integer" % where)


def _scalar(value, where):
    if not (value is None or isinstance(value, (bool, str)) or isinstance(value, int)):
        raise LoopVectorError("%s: expected null, a boolean, an integer or a string" % where)
    if isinstance(value, int) and not isinstance(value, bool):
        _int(value, where)
    if isinstance(value, str) and not all(0x20 <= ord(c) < 0x7F for c in value):
        raise LoopVectorError("%s: strings are printable ASCII" % where)


def validate_event(event, where):
    _keys(event, (), ("id", "add", "set", "emit", "fail", "key"), where)
    if "add" in event and "set" in event:
        raise LoopVectorError("%s: add and set exclude each other" % where)
    for k in ("add", "set"):
        if k in event:
            _int(event[k], "%s.%s" % (where, k))
    if "fail" in event and event["fail"] is not True:
        raise LoopVectorError("%s.fail: only true" % where)
    if "key" in event:
        _label(event["key"], where + ".key")
    if "id" in event:
        _scalar(event["id"], where + ".id")
    if "emit" in event:
        if not isinstance(event["emit"], list):
            raise LoopVectorError("%s.emit: expected an array" % where)
        for i, effect in enumerate(event["emit"]):
            validate_effect(effect, "%s.emit[%d]" % (where, i))


def validate_effect(effect, where):
    _keys(effect, (), ("id", "do"), where)
    if "id" in effect:
        _scalar(effect["id"], where + ".id")
    if "do" in effect:
        if not isinstance(effect["do"], dict):
            raise LoopVectorError("%s.do: expected an object" % where)
        for label, action in effect["do"].items():
            _label(label, where + ".do key")
            validate_action(action, "%s.do.%s" % (where, label), "handler")


def validate_action(action, where, role):
    """role: "handler", "feedback" or "observer" (README 11.3)."""
    optional = {"handler": ("send", "dispatch", "hold", "cancel", "fail", "loop"),
                "feedback": ("send", "dispatch", "hold", "cancel", "loop"),
                "observer": ("send", "dispatch", "cancel", "fail", "loop")}[role]
    _keys(action, (), optional, where)
    if "fail" in action and (action["fail"] is not True or len(action) != 1):
        raise LoopVectorError("%s.fail: only true, and alone" % where)
    for member in ("hold", "cancel"):
        if member in action:
            _label(action[member], "%s.%s" % (where, member))
    if "loop" in action:
        calls = lifecycle_calls(action)
        if not 1 <= len(calls) <= 3 or any(call not in ("stop", "start", "dispose") for call in calls):
            raise LoopVectorError("%s.loop: \"stop\", \"start\" or \"dispose\", or an array of 1-3 of them"
                                  % where)
    for member in ("send", "dispatch"):
        if member in action:
            if not isinstance(action[member], list):
                raise LoopVectorError("%s.%s: expected an array" % (where, member))
            for i, event in enumerate(action[member]):
                validate_event(event, "%s.%s[%d]" % (where, member, i))


RESTART_CALLS = ("stop", "dispose")


def validate_restart(rules, where):
    """The vector's `restart` (README 11.1): null, or rules whose results are objects with
    optional `set` (a model), `emit` (effects) and `loop` ("stop" or "dispose")."""
    if rules is None:
        return
    if not isinstance(rules, list):
        raise LoopVectorError("%s: null or an array of rules" % where)
    for i, rule in enumerate(rules):
        if not (isinstance(rule, list) and len(rule) == 2):
            raise LoopVectorError("%s[%d]: a rule is [model or null, result]" % (where, i))
        if rule[0] is not None:
            _int(rule[0], "%s[%d][0]" % (where, i))
        result, at = rule[1], "%s[%d][1]" % (where, i)
        _keys(result, (), ("set", "emit", "loop"), at)
        if "set" in result:
            _int(result["set"], at + ".set")
        if "emit" in result:
            if not isinstance(result["emit"], list):
                raise LoopVectorError("%s.emit: expected an array" % at)
            for j, effect in enumerate(result["emit"]):
                validate_effect(effect, "%s.emit[%d]" % (at, j))
        if "loop" in result and result["loop"] not in RESTART_CALLS:
            raise LoopVectorError("%s.loop: \"stop\" or \"dispose\"" % at)


def lifecycle_calls(action):
    """The loop calls of an action's `loop` member, in order (a string is one call)."""
    calls = action.get("loop", [])
    return [calls] if isinstance(calls, str) else calls if isinstance(calls, list) else [None]


def validate_rules(rules, where, role):
    if not isinstance(rules, list):
        raise LoopVectorError("%s: expected an array" % where)
    for i, rule in enumerate(rules):
        if not (isinstance(rule, list) and len(rule) == 2):
            raise LoopVectorError("%s[%d]: a rule is [model or null, action]" % (where, i))
        if rule[0] is not None:
            _int(rule[0], "%s[%d][0]" % (where, i))
        validate_action(rule[1], "%s[%d][1]" % (where, i), role)


STEP_KEYS = {
    "dispatch": ("event",), "observe": ("rules",), "unobserve": (), "feedback": ("overlap", "executor", "rules"),
    "remove": (), "send": ("event",), "cancel": (), "finish": (), "run": (), "runAll": (), "start": (),
    "stop": (), "dispose": (), "replay": (),
}


def step_kind(step, where):
    kinds = [k for k in STEP_KEYS if k in step]
    if len(kinds) != 1:
        raise LoopVectorError("%s: exactly one of %s" % (where, ", ".join(sorted(STEP_KEYS))))
    return kinds[0]


def validate_loop_vector(vector):
    _keys(vector, ("format", "name", "kind", "description", "model", "startEffects", "executor", "executors",
                   "coalesce", "journal", "handlers", "feedbacks", "steps"), ("restart",), "vector")
    validate_restart(vector.get("restart"), "vector.restart")
    _int(vector["model"], "vector.model")
    if not isinstance(vector["startEffects"], list):
        raise LoopVectorError("vector.startEffects: expected an array")
    for i, effect in enumerate(vector["startEffects"]):
        validate_effect(effect, "vector.startEffects[%d]" % i)
    executors = vector["executors"]
    if not isinstance(executors, list) or len(set(executors)) != len(executors):
        raise LoopVectorError("vector.executors: an array of distinct labels")
    for name in executors:
        _label(name, "vector.executors")
    if vector["executor"] is not None and vector["executor"] not in executors:
        raise LoopVectorError("vector.executor: null or one of vector.executors")
    for key in ("coalesce", "journal"):
        if not isinstance(vector[key], bool):
            raise LoopVectorError("vector.%s: a boolean" % key)
    handlers = vector["handlers"]
    if not isinstance(handlers, list):
        raise LoopVectorError("vector.handlers: expected an array")
    labels = set()
    for i, handler in enumerate(handlers):
        where = "vector.handlers[%d]" % i
        _keys(handler, ("label", "executor"), (), where)
        _label(handler["label"], where + ".label")
        if handler["executor"] is not None and handler["executor"] not in executors:
            raise LoopVectorError("%s.executor: null or one of vector.executors" % where)
        if handler["label"] in labels:
            raise LoopVectorError("%s.label: used twice" % where)
        labels.add(handler["label"])
    feedbacks = vector["feedbacks"]
    if not isinstance(feedbacks, list):
        raise LoopVectorError("vector.feedbacks: expected an array")
    for i, feedback in enumerate(feedbacks):
        where = "vector.feedbacks[%d]" % i
        _keys(feedback, ("label", "overlap", "executor", "rules"), (), where)
        _label(feedback["label"], where + ".label")
        if feedback["label"] in labels:
            raise LoopVectorError("%s.label: used twice" % where)
        labels.add(feedback["label"])
        if feedback["overlap"] not in OVERLAPS:
            raise LoopVectorError("%s.overlap: one of %s" % (where, ", ".join(OVERLAPS)))
        if feedback["executor"] is not None and feedback["executor"] not in executors:
            raise LoopVectorError("%s.executor: null or one of vector.executors" % where)
        validate_rules(feedback["rules"], where + ".rules", "feedback")
    steps = vector["steps"]
    if not isinstance(steps, list) or not steps:
        raise LoopVectorError("vector.steps: a non-empty array")
    registered = set()
    for i, step in enumerate(steps):
        where = "steps[%d]" % i
        kind = step_kind(step, where)
        _keys(step, (kind, "expect") + STEP_KEYS[kind], ("comment",), where)
        if "comment" in step and not isinstance(step["comment"], str):
            raise LoopVectorError("%s.comment: a string" % where)
        value = step[kind]
        if kind in ("start", "stop", "dispose", "replay"):
            if value is not True:
                raise LoopVectorError("%s.%s: only true" % (where, kind))
        elif kind == "dispatch":
            if value is not True:
                raise LoopVectorError("%s.dispatch: only true (the event is in \"event\")" % where)
        else:
            _label(value, "%s.%s" % (where, kind))
        if kind in ("run", "runAll") and value not in executors:
            raise LoopVectorError("%s.%s: not one of vector.executors" % (where, kind))
        if kind in ("observe", "feedback"):
            if value in registered or value in labels:
                raise LoopVectorError("%s: label %r registered twice" % (where, value))
            registered.add(value)
            validate_rules(step["rules"], where + ".rules", kind if kind == "feedback" else "observer")
        if kind == "feedback":
            if step["overlap"] not in OVERLAPS:
                raise LoopVectorError("%s.overlap: one of %s" % (where, ", ".join(OVERLAPS)))
            if step["executor"] is not None and step["executor"] not in executors:
                raise LoopVectorError("%s.executor: null or one of vector.executors" % where)
        if "event" in step:
            validate_event(step["event"], where + ".event")
        if kind == "replay" and not vector["journal"]:
            raise LoopVectorError("%s: replay needs \"journal\": true" % where)
        validate_expect(step["expect"], where + ".expect", kind)


RESULT_TYPES = {"dispatch": "status", "send": "bool", "run": "bool", "runAll": "int", "start": "bool"}


def validate_expect(expect, where, kind):
    extra = ("journal", "models") if kind == "replay" else ()
    _keys(expect, ("log", "result", "model", "running") + extra, (), where)
    if not isinstance(expect["log"], list) or not all(
            isinstance(e, list) and e and isinstance(e[0], str) for e in expect["log"]):
        raise LoopVectorError("%s.log: an array of entries [kind, ...]" % where)
    _int(expect["model"], where + ".model")
    if not isinstance(expect["running"], bool):
        raise LoopVectorError("%s.running: a boolean" % where)
    result, shape = expect["result"], RESULT_TYPES.get(kind)
    ok = {None: result is None,
          "status": result in ("ok", "stopped", "disposed"),
          "bool": isinstance(result, bool),
          "int": isinstance(result, int) and not isinstance(result, bool)}[shape]
    if not ok:
        raise LoopVectorError("%s.result: wrong type for a %s step" % (where, kind))


# ---------------------------------------------------------------------------------------
# The loop


class Session(object):
    """One run: its jobs' cancel actions, by job number (README 11.4)."""

    def __init__(self):
        self.cancelled = False
        self.actions = {}
        self.next_job = 1

    def cancel(self):
        if self.cancelled:
            return
        self.cancelled = True
        actions, self.actions = self.actions, {}
        for number in sorted(actions):
            for action in actions[number]:
                action()


class Job(object):
    def __init__(self, loop, session):
        self.loop = loop
        self.session = session
        self.state = "running"
        session.next_job += 1
        self.number = session.next_job

    @property
    def cancelled(self):
        return self.state == "cancelled" or self.session.cancelled

    @property
    def running(self):
        return self.state == "running" and not self.session.cancelled

    def send(self, event):
        if not self.running:
            return False
        return self.loop.enqueue(event, self) is None

    def finish(self):
        if self.state != "running":
            return
        self.state = "finished"
        self.session.actions.pop(self.number, None)

    def cancel(self):
        if self.state != "running":
            return
        self.state = "cancelled"
        for action in self.session.actions.pop(self.number, []):
            action()

    def on_cancel(self, action):
        if self.cancelled:
            action()
        elif self.running:
            self.session.actions.setdefault(self.number, []).append(action)


class Entry(object):
    """A queued event (with its job, key and the events it replaced), a start, or a
    registration."""

    def __init__(self, event=None, job=None, key=None, start=False, first=None, control=None):
        self.event = event
        self.job = job
        self.key = key
        self.replaced = []
        self.start = start
        self.first = first
        self.control = control


class Observer(object):
    def __init__(self, label, rules):
        self.label = label
        self.rules = rules
        self.closed = False


class FeedbackEntry(object):
    def __init__(self, label, overlap, executor, rules):
        self.label = label
        self.overlap = overlap
        self.executor = executor
        self.rules = rules
        self.removed = False
        self.running = None  # the jobs of the current run's work slot; None: no instance


def choose(rules, model):
    for match, action in rules:
        if match is None or match == model:
            return action
    return {}


class LoopModel(object):
    def __init__(self, vector):
        self.vector = vector
        self.model = vector["model"]
        self.pending_first = (vector["model"], list(vector["startEffects"]))
        self.status = "stopped"
        self.session = None
        self.queue = []
        self.keyed = {}
        self.draining = False
        self.drainer = False  # whether a drain is running now (single-threaded)
        self.executors = dict((name, deque()) for name in vector["executors"])
        self.loop_executor = vector["executor"]
        self.handlers = vector["handlers"]
        self.restart = vector.get("restart")  # None: no restart (README 11.1)
        self.subscribers = []
        self.structures_live = True
        self.jobs = {}
        self.journal = [] if vector["journal"] else None
        self.log = []
        self.updates = 0
        self.starts = 0
        self.registrations = {}
        # Feedbacks given at creation: registered when the loop is made, before anything
        # else (not through the queue), and not removable by a step.
        for feedback in vector["feedbacks"]:
            entry = FeedbackEntry(feedback["label"], feedback["overlap"], feedback["executor"], feedback["rules"])
            self.subscribers.append(("feedback", entry))

    # -- user calls ----------------------------------------------------------------

    def trace(self, *entry):
        self.log.append(["trace"] + list(entry))

    def update(self, model, event):
        self.log.append(["update", event, model])
        self.updates += 1
        if self.updates > MAX_UPDATES:
            raise LoopVectorError("more than %d updates: the callbacks keep feeding the loop" % MAX_UPDATES)
        if event.get("fail"):
            raise UserFailure()
        if "set" in event:
            new = event["set"]
        elif "add" in event:
            new = model + event["add"]
            if not -INT_LIMIT <= new < INT_LIMIT:
                raise LoopVectorError("a model leaves the 32-bit range")
        else:
            new = None
        return new, list(event.get("emit", []))

    def key_of(self, event):
        return event.get("key") if self.vector["coalesce"] else None

    def act(self, label, action, job=None):
        """What a scripted callback does once called and logged (README 11.3)."""
        if action.get("fail"):
            raise UserFailure()
        for event in action.get("send", []):
            accepted = job.send(event) if job is not None else self.enqueue(event, None) is None
            if not accepted:
                self.log.append(["refused", label, event])
        for event in action.get("dispatch", []):
            if self.enqueue(event, None) is not None:
                self.log.append(["refused", label, event])
        if job is not None:
            if "hold" in action:
                name = action["hold"]
                self.jobs[name] = job
                job.on_cancel(lambda: self.log.append(["cancelled", name]))
            else:
                job.finish()
        if action.get("cancel") in self.jobs:
            self.jobs[action["cancel"]].cancel()
        for call in lifecycle_calls(action):
            if call == "stop":
                self.close("stopped")
            elif call == "dispose":
                self.close("disposed")
            else:
                self.start()

    # -- the queue -----------------------------------------------------------------

    def enqueue(self, event, job):
        """None, or why the event was refused."""
        if self.status != "running":
            return self.status
        key = self.key_of(event)
        if key is not None:
            entry = self.keyed.get(key)
            if entry is not None and any(e is entry for e in self.queue):
                entry.replaced.append(entry.event)
                entry.job = job
                entry.event = event
            else:
                entry = Entry(event=event, job=job, key=key)
                self.keyed[key] = entry
                self.queue.append(entry)
        else:
            self.queue.append(Entry(event=event, job=job))
        self.schedule()
        return None

    def enqueue_control(self, body):
        if self.status == "disposed":
            return False
        self.queue.append(Entry(control=body))
        self.schedule()
        return True

    def schedule(self):
        if not self.draining:
            self.draining = True
            self.run_drain()

    def run_drain(self):
        if self.loop_executor is None:
            self.drain()
        else:
            self.executors[self.loop_executor].append(self.drain)

    def drain(self):
        steps_per_run = 1 if self.loop_executor is not None else None
        self.drainer = True
        steps = 0
        while self.queue and self.status != "disposed":
            if steps == steps_per_run:
                self.drainer = False
                self.executors[self.loop_executor].append(self.drain)
                return
            steps += 1
            entry = self.queue.pop(0)
            if entry.key is not None and self.keyed.get(entry.key) is entry:
                del self.keyed[entry.key]
            self.process(entry, self.session)
        self.draining = False
        self.drainer = False
        if self.status == "disposed" and self.structures_live:
            self.structures_live = False
            self.clear_structures()

    def process(self, entry, session):
        if entry.event is not None:
            for old in entry.replaced:
                self.trace("dropped", old, "coalesced")
            if entry.job is not None and entry.job.cancelled:
                self.trace("dropped", entry.event, "cancelledWork")
                return
            if session is None or session.cancelled:
                self.trace("dropped", entry.event, "stopped")
                return
            self.step(entry.event, session)
        elif entry.start:
            if session is not None and not session.cancelled:
                self.begin(entry.first, session)
        else:
            entry.control(session)

    # -- steps ---------------------------------------------------------------------

    def begin(self, first, session):
        if first is None:
            first = self.restarted() if self.restart is not None else (self.model, [])
            if session.cancelled:
                return  # stopped or disposed from inside the restart: nothing of the start
        model, effects = first
        self.trace("started", model, effects)
        if self.journal is not None:
            self.journal.append(["start", model])
        self.model = model
        for kind, sub in self.subscribers:
            if kind == "feedback" and not sub.removed:
                sub.running = []
        self.publish(model, session)
        self.handle(effects, session)

    def restarted(self):
        """The restart (README 11.1), called with the kept model: logs, makes its loop call,
        and gives the run's first model and start effects."""
        kept = self.model
        self.log.append(["restart", kept])
        result = choose(self.restart, kept)
        if "loop" in result:
            self.close("stopped" if result["loop"] == "stop" else "disposed")
        return result.get("set", kept), list(result.get("emit", []))

    def step(self, event, session):
        before = self.model
        try:
            new, effects = self.update(before, event)
        except UserFailure:
            if self.journal is not None:
                self.journal.append(["event", event])
            self.trace("failed", event, before)
            return
        if self.journal is not None:
            self.journal.append(["event", event])
        self.trace("stepped", event, before, new, effects)
        if new is not None:
            self.model = new
            self.publish(new, session)
        self.handle(effects, session)

    def publish(self, model, session):
        saw_removed = False
        for kind, sub in list(self.subscribers):
            if session.cancelled:
                return
            if kind == "observer":
                if sub.closed:
                    saw_removed = True
                    continue
                self.deliver(model, sub)
            else:
                if sub.removed:
                    saw_removed = True
                    continue
                self.feedback_receive(sub, model, session)
        if saw_removed:
            self.subscribers = [(k, s) for k, s in self.subscribers
                                if not (s.closed if k == "observer" else s.removed)]

    def deliver(self, model, observer):
        if observer.closed:
            return
        self.log.append(["observe", observer.label, model])
        try:
            self.act(observer.label, choose(observer.rules, model))
        except UserFailure:
            self.trace("observerFailed")

    def feedback_receive(self, entry, model, session):
        if entry.running is None:
            return
        entry.running = [job for job in entry.running if job.running]
        if entry.overlap == "cancelPrevious":
            jobs, entry.running = entry.running, []
            for job in jobs:
                job.cancel()
        elif entry.overlap == "keepPrevious" and entry.running:
            return
        job = Job(self, session)
        entry.running.append(job)

        def body():
            self.log.append(["feedback", entry.label, model])
            self.act(entry.label, choose(entry.rules, model), job)
        self.launch(job, entry.executor, body)

    def launch(self, job, executor, body):
        if executor is None:
            body()
            return
        session = job.session

        def work():
            if not session.cancelled and not job.cancelled:
                body()
        self.executors[executor].append(work)

    def handle(self, effects, session):
        for effect in effects:
            for handler in self.handlers:
                if session.cancelled:
                    return
                job = Job(self, session)
                label = handler["label"]

                def body(effect=effect, label=label, job=job):
                    self.log.append(["handle", label, effect])
                    try:
                        self.act(label, effect.get("do", {}).get(label, {}), job)
                    except UserFailure:
                        self.trace("effectFailed", effect)
                self.launch(job, handler["executor"], body)

    # -- lifecycle -----------------------------------------------------------------

    def start(self):
        if self.status != "stopped":
            return self.status == "running"
        self.starts += 1
        if self.starts > MAX_UPDATES:
            raise LoopVectorError("more than %d starts: the callbacks keep restarting the loop" % MAX_UPDATES)
        self.status = "running"
        self.session = Session()
        self.queue.insert(0, Entry(start=True, first=self.pending_first))
        self.pending_first = None
        self.schedule()
        return self.status == "running"  # the start's drain may have closed it again

    def close(self, target):
        if self.status == "disposed" or (self.status == "stopped" and target == "stopped"):
            return
        removed = [e for e in self.queue if target == "disposed" or e.control is None]
        self.queue = [e for e in self.queue if not any(e is r for r in removed)]
        start_was_pending = False
        for entry in removed:
            if entry.start:
                start_was_pending = True
                if entry.first is not None:
                    self.pending_first = entry.first
        self.keyed = {}
        ending, self.session = self.session, None
        was_running = self.status == "running"
        self.status = target
        last = self.model
        clear_now = target == "disposed" and not self.drainer and self.structures_live
        if clear_now:
            self.structures_live = False
        for entry in removed:
            for old in entry.replaced:
                self.trace("dropped", old, "coalesced")
            if entry.event is not None:
                self.trace("dropped", entry.event, target)
        if ending is not None:
            ending.cancel()
        if (was_running and not start_was_pending) or target == "disposed":
            self.trace(target, last)
        if clear_now:
            self.clear_structures()
        if target == "stopped" and self.queue and not self.draining:
            self.draining = True
            self.run_drain()

    def clear_structures(self):
        for kind, sub in self.subscribers:
            if kind == "observer":
                sub.closed = True
        self.subscribers = []

    # -- registrations -------------------------------------------------------------

    def observe(self, label, rules):
        observer = Observer(label, rules)
        self.registrations[label] = observer

        def body(session):
            if observer.closed:
                return
            self.subscribers.append(("observer", observer))
            if session is not None and not session.cancelled:
                self.deliver(self.model, observer)
        if not self.enqueue_control(body):
            observer.closed = True

    def add_feedback(self, label, overlap, executor, rules):
        entry = FeedbackEntry(label, overlap, executor, rules)
        self.registrations[label] = entry

        def body(session):
            if entry.removed:
                return
            self.subscribers.append(("feedback", entry))
            if session is not None and not session.cancelled:
                entry.running = []
                self.feedback_receive(entry, self.model, session)
        self.enqueue_control(body)

    def remove_feedback(self, entry):
        if entry.removed:
            return
        entry.removed = True

        def body(session):
            self.subscribers = [(k, s) for k, s in self.subscribers if s is not entry]
            jobs, entry.running = entry.running or [], None
            for job in jobs:
                job.cancel()
        self.enqueue_control(body)

    # -- the journal ---------------------------------------------------------------

    def replay(self):
        models, current = [], None
        for kind, value in self.journal:
            if kind == "start":
                current = value
                models.append(value)
            elif current is not None:
                try:
                    new, _ = self.update(current, value)
                except UserFailure:
                    continue
                if new is not None:
                    current = new
                    models.append(new)
        return models

    # -- a step of the vector --------------------------------------------------------

    def run_step(self, step, where):
        self.log = []
        kind = step_kind(step, where)
        value = step[kind]
        result = None
        extra = {}
        if kind == "dispatch":
            refusal = self.enqueue(step["event"], None)
            result = "ok" if refusal is None else refusal
        elif kind == "observe":
            self.observe(value, step["rules"])
        elif kind == "unobserve":
            observer = self.registrations.get(value)
            if not isinstance(observer, Observer):
                raise LoopVectorError("%s: %r is not an observer registered before" % (where, value))
            observer.closed = True
        elif kind == "feedback":
            self.add_feedback(value, step["overlap"], step["executor"], step["rules"])
        elif kind == "remove":
            entry = self.registrations.get(value)
            if not isinstance(entry, FeedbackEntry):
                raise LoopVectorError("%s: %r is not a feedback registered before" % (where, value))
            self.remove_feedback(entry)
        elif kind in ("send", "cancel", "finish"):
            job = self.jobs.get(value)
            if job is None:
                raise LoopVectorError("%s: no job was held as %r before" % (where, value))
            if kind == "send":
                result = job.send(step["event"])
            elif kind == "cancel":
                job.cancel()
            else:
                job.finish()
        elif kind == "run":
            queue = self.executors[value]
            result = bool(queue)
            if queue:
                queue.popleft()()
        elif kind == "runAll":
            queue, result = self.executors[value], 0
            while queue:
                queue.popleft()()
                result += 1
        elif kind == "start":
            result = self.start()
        elif kind in ("stop", "dispose"):
            self.close("stopped" if kind == "stop" else "disposed")
        elif kind == "replay":
            extra = {"journal": [list(e) for e in self.journal]}
            extra["models"] = self.replay()
        out = {"log": self.log, "result": result, "model": self.model, "running": self.status == "running"}
        out.update(extra)
        return out


def run_loop(vector):
    """Executes the vector's steps; returns the model's loop afterwards (for the
    generator, which looks at its state) and one expectation per step."""
    loop = LoopModel(vector)
    return loop, [loop.run_step(step, "steps[%d]" % i) for i, step in enumerate(vector["steps"])]


def run_loop_vector(vector):
    """Executes the vector's steps; returns one expectation per step."""
    return run_loop(vector)[1]
