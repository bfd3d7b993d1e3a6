#!/usr/bin/env python3
"""Seeded generator of random composite conformance vectors.

    python3 scripts/gen_vectors.py                 # (re)writes conformance/generated/, exact/, list/, loop/
    python3 scripts/gen_vectors.py --family exact  # only conformance/exact/
    python3 scripts/gen_vectors.py --seed 7 --count 100 --out /tmp/vectors   # generated family
    python3 scripts/gen_vectors.py --check         # exit 1 if the committed files differ

Five families, each with its own seed: "generated" (gen-NNNN.json, random composite
diffuser and fuser vectors), "exact" (exact-NNNN.json, diffuser vectors on the vector's
equality, "boom", labelled transforms and predicates, failures of every user call),
"list" (list-NNNN.json, keyed list diffs: pairing, duplicates, moves, batches, scripts)
"loop" (loop-NNNN.json, scripted loops: scripts/gen_loop_vectors.py, checked against
scripts/loop_model.py) and "restart" (restart-NNNN.json beside them in conformance/loop/,
scripted loops with a restart).
The same seed and count always produce byte-identical files. Vector i is generated from
its own random stream (derived from the seed and i), so changing --count does not change
the vectors that are kept. Expected logs come from scripts/conformance_model.py.

One script because the families share its machinery: the exact family's generator
subclasses the generated family's DiffuserGen and reuses its value helpers, and every
family is written and checked (--check, byte-identical files) by the same code.
"""

import argparse
import copy
import filecmp
import json
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance_model as model  # noqa: E402
import gen_loop_vectors  # noqa: E402

DEFAULT_SEED = 20261121
DEFAULT_COUNT = 540
FUSER_SHARE = 0.30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "conformance", "generated")

FIELDS = ["a", "b", "c", "d", "e"]
STRINGS = ["", "x", "y", "xy", "hello"]


# ---------------------------------------------------------------------------------------
# Random values


def rand_scalar(rng):
    r = rng.random()
    if r < 0.40:
        return rng.randint(-2, 4)
    if r < 0.60:
        return rng.choice([True, False])
    if r < 0.80:
        return rng.choice(STRINGS)
    return None


def rand_value(rng, depth):
    r = rng.random()
    if depth > 0 and r < 0.25:
        keys = sorted(rng.sample(FIELDS, rng.randint(1, 3)))
        return dict((k, rand_value(rng, depth - 1)) for k in keys)
    if depth > 0 and r < 0.35:
        return [rand_scalar(rng) for _ in range(rng.randint(0, 3))]
    return rand_scalar(rng)


def rand_model(rng):
    keys = sorted(rng.sample(FIELDS, rng.randint(2, 4)))
    return dict((k, rand_value(rng, 2)) for k in keys)


def all_paths(value, prefix=()):
    """Every path (tuple of keys/indices) into value, including the empty path."""
    paths = [prefix]
    if model.json_type(value) == "object":
        for k in sorted(value):
            paths.extend(all_paths(value[k], prefix + (k,)))
    elif model.json_type(value) == "array":
        for i, item in enumerate(value):
            paths.extend(all_paths(item, prefix + (i,)))
    return paths


def get_path(value, path):
    for step in path:
        value = value[step]
    return value


def set_path(value, path, new):
    if not path:
        return new
    parent = get_path(value, path[:-1])
    parent[path[-1]] = new
    return value


def similar_value(rng, old):
    """A value that is often equal to old, often of the same type, sometimes different."""
    r = rng.random()
    if r < 0.25:
        return copy.deepcopy(old)
    t = model.json_type(old)
    if r < 0.80:
        if t == "int":
            return old + rng.choice([-2, -1, 1, 1, 2, 3])
        if t == "bool":
            return not old
        if t == "string":
            return rng.choice(STRINGS)
        if t == "array":
            new = copy.deepcopy(old)
            if new and rng.random() < 0.5:
                new[rng.randrange(len(new))] = rand_scalar(rng)
            elif rng.random() < 0.5 and new:
                new.pop()
            else:
                new.append(rand_scalar(rng))
            return new
        if t == "object":
            new = copy.deepcopy(old)
            k = rng.choice(FIELDS)
            new[k] = rand_value(rng, 1)
            return new
        return rand_scalar(rng)
    return rand_value(rng, 1)


def next_model(rng, current, history):
    r = rng.random()
    if r < 0.30:
        return copy.deepcopy(current)
    if r < 0.40 and history:
        return copy.deepcopy(rng.choice(history))
    if r < 0.43:
        return rand_scalar(rng)
    if r < 0.47:
        return rand_model(rng)
    new = copy.deepcopy(current)
    if model.json_type(new) != "object":
        return rand_model(rng)
    for _ in range(rng.choice([1, 1, 1, 2])):
        if rng.random() < 0.08:
            keys = sorted(new)
            if keys:
                del new[rng.choice(keys)]
            continue
        paths = [p for p in all_paths(new) if p]
        if not paths:
            new[rng.choice(FIELDS)] = rand_value(rng, 1)
            continue
        path = rng.choice(paths)
        set_path(new, path, similar_value(rng, get_path(new, path)))
    return new


# ---------------------------------------------------------------------------------------
# Diffuser trees


class DiffuserGen(object):
    def __init__(self, rng, sample):
        self.rng = rng
        self.sample = sample
        self.labels = 0
        self.shared = []
        self.ops = set()

    def label(self):
        self.labels += 1
        return "e%d" % self.labels

    def selector_for(self, sample):
        rng = self.rng
        r = rng.random()
        if r < 0.06:
            return {"identity": True}
        if r < 0.12:
            return {"field": rng.choice(FIELDS + ["zz"])}  # often missing: yields null
        paths = [p for p in all_paths(sample) if p]
        if not paths:
            return {"field": rng.choice(FIELDS)}
        path = rng.choice(paths)
        if len(path) == 1 and isinstance(path[0], str) and rng.random() < 0.8:
            return {"field": path[0]}
        if rng.random() < 0.1:
            path = path + (rng.choice(["a", 0, 5]),)  # sometimes past the end: null
        return {"path": list(path)}

    def predicate_for(self, sample):
        """increased/decreased mostly where the value is an integer (else they say no)."""
        rng = self.rng
        if model.json_type(sample) == "int":
            return rng.choice(["increased", "increased", "decreased", "changed", "always", "never"])
        return rng.choice(["changed", "changed", "always", "never", "never", "increased",
                           "decreased"])

    def leaf(self, sample):
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            node = {"op": "into", "effect": self.label()}
        elif r < 0.50:
            node = {"op": "intoAlways", "effect": self.label()}
        elif r < 0.63:
            node = {"op": "intoOnce", "effect": self.label()}
        else:
            node = {"op": "intoWhen", "predicate": self.predicate_for(sample),
                    "effect": self.label()}
        self.ops.add(node["op"])
        return node

    def node(self, depth, sample, max_depth):
        rng = self.rng
        if depth >= max_depth or (depth > 0 and rng.random() < 0.30):
            return self.leaf(sample)
        r = rng.random()
        if depth == 0:
            op = rng.choice(["intoAll"] * 9 + ["intoAlways"] * 5 + ["map"] * 3
                            + ["intoWhen"] * 2 + ["invert"])
        elif self.shared and r < 0.12:
            self.ops.add("ref")
            return {"op": "ref", "ref": rng.choice(self.shared)}
        elif r < 0.30:
            op = "intoAll"
        elif r < 0.42:
            op = "intoAlways"
        elif r < 0.52:
            op = "intoWhen"
        elif r < 0.85:
            op = "map"
        else:
            op = "invert"
        self.ops.add(op)
        if op in ("intoAll", "intoAlways"):
            n = rng.choice([1, 2, 2, 3, 3, 4]) if depth == 0 else rng.choice([0, 1, 2, 2, 3])
            return {"op": op, "children": [self.node(depth + 1, sample, max_depth) for _ in range(n)]}
        if op == "intoWhen":
            return {"op": "intoWhen", "predicate": self.predicate_for(sample),
                    "child": self.node(depth + 1, sample, max_depth)}
        if op == "map":
            selector = self.selector_for(sample)
            sub = model.apply_selector(selector, sample)
            return {"op": "map", "selector": selector, "child": self.node(depth + 1, sub, max_depth)}
        return {"op": "invert", "child": self.node(depth + 1, model.logical_not(sample), max_depth)}


def count_refs(desc, counts):
    if desc.get("op") == "ref":
        counts[desc["ref"]] = counts.get(desc["ref"], 0) + 1
    for child in desc.get("children", []):
        count_refs(child, counts)
    if "child" in desc:
        count_refs(desc["child"], counts)


def labels_in(desc, nodes, out):
    if "effect" in desc:
        out.append(desc["effect"])
    for child in desc.get("children", []):
        labels_in(child, nodes, out)
    if "child" in desc:
        labels_in(desc["child"], nodes, out)
    return out


def gen_diffuser(rng, name, seed, index):
    first = rand_model(rng)
    gen = DiffuserGen(rng, first)
    nodes = {}
    n_shared = rng.choice([0, 0, 1, 1, 1, 2])
    for i in range(n_shared):
        shared_name = "n%d" % (i + 1)
        nodes[shared_name] = gen.node(1, first, rng.choice([2, 3]))
        gen.shared.append(shared_name)
    root = gen.node(0, first, rng.choice([2, 3, 3, 4, 4]))
    # Every shared node is referenced at least twice (a child shared by two parents).
    counts = {}
    count_refs(root, counts)
    for desc in nodes.values():
        count_refs(desc, counts)
    for shared_name in gen.shared:
        missing = max(0, 2 - counts.get(shared_name, 0))
        if missing:
            gen.ops.add("ref")
            if root["op"] not in ("intoAll", "intoAlways") or "children" not in root:
                root = {"op": "intoAlways", "children": [root]}
            for _ in range(missing):
                position = rng.randint(0, len(root["children"]))
                root["children"].insert(position, {"op": "ref", "ref": shared_name})

    all_labels = sorted(set(labels_in(root, nodes, [])
                            + sum((labels_in(d, nodes, []) for d in nodes.values()), [])),
                        key=lambda s: int(s[1:]))
    vector = {"format": model.FORMAT, "name": name, "kind": "diffuser", "description": "",
              "nodes": nodes, "root": root, "steps": []}
    if not all_labels:
        # No effect at all (only empty fan-outs): add one so the vector observes something.
        label = gen.label()
        root = {"op": "intoAlways", "children": [root, {"op": "into", "effect": label}]}
        vector["root"] = root
        all_labels = [label]
        gen.ops.update(["intoAlways", "into"])

    # Sometimes the root itself is a reference to a named node (drawn from a stream of
    # its own, so that the other vectors stay as they were).
    if random.Random("root-ref %d %d" % (seed, index)).random() < 0.1:
        vector["nodes"]["top"] = vector["root"]
        vector["root"] = {"op": "ref", "ref": "top"}
        gen.ops.add("ref")

    sim = model.DiffuserModel(vector)
    current = first
    history = []
    failures = 0
    for i in range(rng.randint(3, 10)):
        if i > 0:
            current = next_model(rng, current, history)
        history.append(current)
        step = {"run": copy.deepcopy(current)}
        if rng.random() < 0.18:
            # Prefer an effect that would run in this step, so that the failure matters.
            probe = copy.deepcopy(sim).step({"run": current})
            ran = [entry[0] for entry in probe["log"]]
            if ran and rng.random() < 0.8:
                fail = [rng.choice(ran)]
            else:
                fail = [rng.choice(all_labels)]
            if rng.random() < 0.15:
                fail.append(rng.choice(all_labels))
            # A label that runs more than once in the step (a shared node) may fail at one
            # of its calls only ("L@k"), so that a use before it succeeds.
            if ran.count(fail[0]) > 1 and rng.random() < 0.6:
                fail[0] = "%s@%d" % (fail[0], rng.randint(1, ran.count(fail[0]) + 1))
            step["fail"] = sorted(set(fail), key=lambda s: [int(part) for part in s[1:].split("@")])
            failures += 1
        step["expect"] = sim.step(step)
        vector["steps"].append(step)
        # After a failure, often retry the same value so the retry is observable.
        if "fail" in step and rng.random() < 0.5 and len(vector["steps"]) < 10:
            retry = {"run": copy.deepcopy(current)}
            retry["expect"] = sim.step(retry)
            vector["steps"].append(retry)

    vector["description"] = (
        "Generated diffuser vector (seed %d, index %d): %d runs, %d with failing effects; "
        "ops: %s." % (seed, index, len(vector["steps"]), failures, ", ".join(sorted(gen.ops))))
    return vector


# ---------------------------------------------------------------------------------------
# Fuser graphs

TRANSFORMS = ["identity", "double", "negate", "not", "length",
              "field:a", "field:b", "wrap:a", "wrap:v"]


def rand_event(rng):
    r = rng.random()
    if r < 0.40:
        return rng.randint(-3, 5)
    if r < 0.55:
        return rng.choice(STRINGS)
    if r < 0.65:
        return rng.choice([True, False])
    if r < 0.72:
        return None
    if r < 0.92:
        obj = {}
        for k in ["a", "b"]:
            if rng.random() < 0.7:
                obj[k] = rand_scalar(rng)
        return obj
    return [rand_scalar(rng) for _ in range(rng.randint(0, 3))]


class FuserGen(object):
    def __init__(self, rng, sources):
        self.rng = rng
        self.sources = sources
        self.used = set()
        self.shared = []
        self.ops = set()

    def node(self, depth, max_depth):
        rng = self.rng
        r = rng.random()
        if depth >= max_depth or r < 0.28:
            source = rng.choice(self.sources)
            self.used.add(source)
            self.ops.add("from")
            return {"op": "from", "source": source}
        if self.shared and r < 0.36:
            self.ops.add("ref")
            return {"op": "ref", "ref": rng.choice(self.shared)}
        if r < 0.58:
            self.ops.add("fromAll")
            n = rng.choice([0, 1, 2, 2, 3, 3]) if depth > 0 else rng.choice([2, 2, 3, 4])
            return {"op": "fromAll", "children": [self.node(depth + 1, max_depth) for _ in range(n)]}
        if r < 0.74:
            self.ops.add("extract")
            return {"op": "extract", "transform": rng.choice(TRANSFORMS),
                    "child": self.node(depth + 1, max_depth)}
        if r < 0.84:
            self.ops.add("extractConstant")
            return {"op": "extractConstant", "constant": rand_value(rng, 1),
                    "child": self.node(depth + 1, max_depth)}
        self.ops.add("extractUnlessNull")
        return {"op": "extractUnlessNull", "transform": rng.choice(TRANSFORMS),
                "child": self.node(depth + 1, max_depth)}


def gen_fuser(rng, name, seed, index):
    sources = ["s%d" % (i + 1) for i in range(rng.choice([1, 2, 2, 3, 3]))]
    gen = FuserGen(rng, sources)
    nodes = {}
    if rng.random() < 0.35:
        nodes["n1"] = gen.node(1, 2)
        gen.shared.append("n1")
    root = gen.node(0, rng.choice([1, 2, 3, 3]))
    for _ in range(5):
        if gen.used:
            break
        # The tree has no source at all (only empty fromAll nodes): try again.
        root = gen.node(0, rng.choice([1, 2, 3, 3]))
    counts = {}
    count_refs(root, counts)
    if gen.shared and counts.get("n1", 0) < 2:
        if root["op"] != "fromAll":
            root = {"op": "fromAll", "children": [root]}
            gen.ops.add("fromAll")
        for _ in range(2 - counts.get("n1", 0)):
            root["children"].insert(rng.randint(0, len(root["children"])), {"op": "ref", "ref": "n1"})
        gen.ops.add("ref")
    if not gen.used:
        # Only empty fromAll nodes: still emit to a source, whose events are all dropped.
        gen.used.add(sources[0])
    used = sorted(gen.used)

    vector = {"format": model.FORMAT, "name": name, "kind": "fuser", "description": "",
              "sources": used, "nodes": nodes, "root": root, "steps": []}
    sim = model.FuserModel(vector)
    connected = []
    active = []
    n_steps = rng.randint(6, 16)
    emits = 0
    failures = 0
    if rng.random() < 0.5:
        plan = ["emit"]
    else:
        plan = []
    plan.append("connect")
    while len(plan) < n_steps:
        r = rng.random()
        if r < 0.62:
            plan.append("emit")
        elif r < 0.80:
            plan.append("connect")
        else:
            plan.append("dispose")
    for kind in plan:
        if kind == "connect" and len(connected) >= 3:
            kind = "emit"
        if kind == "dispose" and not connected:
            kind = "emit"
        if kind == "connect":
            label = "c%d" % (len(connected) + 1)
            connected.append(label)
            active.append(label)
            step = {"connect": label}
        elif kind == "dispose":
            # Mostly an active connection; sometimes one already disposed (idempotence).
            if active and rng.random() < 0.8:
                label = rng.choice(active)
            else:
                label = rng.choice(connected)
            if label in active:
                active.remove(label)
            step = {"dispose": label}
        else:
            step = {"emit": rng.choice(used), "value": rand_event(rng)}
            emits += 1
            if active and rng.random() < 0.15:
                fail = [rng.choice(active)]
                if rng.random() < 0.2:
                    fail.append(rng.choice(connected))
                step["fail"] = sorted(set(fail))
                failures += 1
        step["expect"] = sim.step(step)
        vector["steps"].append(step)
    vector["description"] = (
        "Generated fuser vector (seed %d, index %d): %d steps, %d emits, %d with failing "
        "effects; ops: %s." % (seed, index, len(vector["steps"]), emits, failures,
                               ", ".join(sorted(gen.ops))))
    return vector


# ---------------------------------------------------------------------------------------
# Exactness vectors (conformance/exact/): the vector's equality ("near", "nan"), the value
# "boom", labelled transforms and predicates, failures of every kind of user call.
#
# A second family with its own seed and its own random streams: nothing above this line
# is changed by it, so conformance/generated/ stays byte-identical.

EXACT_SEED = 20261212
EXACT_COUNT = 240
EXACT_OUT = os.path.join(ROOT, "conformance", "exact")

# Vector i uses SCENARIOS[(i - 1) % len(SCENARIOS)], so every scenario gets its share.
SCENARIOS = ["near-drift", "near-root", "nan-repeat", "nan-root", "boom-root", "boom-below",
             "fanout-fail", "multi-fail", "predicate-fail", "mixed"]
DEFAULT_ROOT_OPS = ["intoAll"] * 9 + ["intoAlways"] * 5 + ["map"] * 3 + ["intoWhen"] * 2 + ["invert"]
NAN_ROOT_VALUES = ["NaN", "NaN", "NaN", ["NaN"], ["NaN", 1], {"a": "NaN"}, {"a": "NaN", "b": 1},
                   {"a": ["NaN"]}, "x", 1, [1], {"a": 1}]


def exact_scalar(rng, flavor):
    r = rng.random()
    if flavor == "near" and r < 0.40:
        return rng.randint(-1, 3)
    if flavor == "nan" and r < 0.25:
        return "NaN"
    return rand_scalar(rng)


def exact_value(rng, depth, flavor):
    r = rng.random()
    if depth > 0 and r < 0.25:
        keys = sorted(rng.sample(FIELDS, rng.randint(1, 3)))
        return dict((k, exact_value(rng, depth - 1, flavor)) for k in keys)
    if depth > 0 and r < 0.40:
        return [exact_scalar(rng, flavor) for _ in range(rng.randint(0, 3))]
    return exact_scalar(rng, flavor)


def exact_model(rng, flavor):
    keys = sorted(rng.sample(FIELDS, rng.randint(2, 4)))
    return dict((k, exact_value(rng, 2, flavor)) for k in keys)


def int_paths(value):
    return [p for p in all_paths(value) if model.json_type(get_path(value, p)) == "int"]


def drift(rng, value, direction):
    """value with some of its integers moved by one, mostly in direction (+1 or -1):
    near-equal to value but not json-equal, so that a run of drifts 0, 1, 2, 3 separates
    "keep the new value" from "keep the old one"."""
    paths = int_paths(value)
    new = copy.deepcopy(value)
    if not paths:
        return new
    chosen = paths if rng.random() < 0.85 else rng.sample(paths, rng.randint(1, len(paths)))
    for path in chosen:
        step = rng.choice([direction] * 5 + [-direction])
        new = set_path(new, path, get_path(new, path) + step)
    return new


def put_path(value, path, leaf):
    """value with leaf at path, creating the objects and arrays on the way."""
    if not path:
        return leaf
    head, rest = path[0], path[1:]
    if isinstance(head, str):
        obj = copy.deepcopy(value) if model.json_type(value) == "object" else {}
        obj[head] = put_path(obj.get(head), rest, leaf)
        return obj
    arr = copy.deepcopy(value) if model.json_type(value) == "array" else []
    while len(arr) <= head:
        arr.append(None)
    arr[head] = put_path(arr[head], rest, leaf)
    return arr


def sprinkle(rng, value, text, selected):
    """value with the string text put at a selected path (mostly) or at any path."""
    if selected and rng.random() < 0.75:
        return put_path(value, rng.choice(selected), text)
    paths = [p for p in all_paths(value) if p] or [(rng.choice(FIELDS),)]
    return put_path(value, rng.choice(paths), text)


def distinct(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def nan_everywhere(rng, value, selected):
    """value with "NaN" (sometimes ["NaN"]) at most of the innermost selected paths."""
    paths = distinct(selected)
    paths = [p for p in paths if not any(q != p and q[:len(p)] == p for q in paths)]
    if not paths:
        return sprinkle(rng, value, "NaN", [])
    for path in paths:
        if rng.random() < 0.85:
            value = put_path(value, path, "NaN" if rng.random() < 0.85 else ["NaN"])
    return value


def plan_values(rng, scenario, equality, first, n_runs, selected):
    """The run values before "boom" is put in: under near, segments drifting by one per run
    (0, 1, 2, 3 on every integer); under nan, segments of identical values with "NaN"
    where maps select; otherwise the small changes of next_model."""
    direction = rng.choice([1, 1, -1])
    values = [first]
    while len(values) < n_runs:
        last = values[-1]
        r = rng.random()
        if equality == "near" and r < 0.6:
            for _ in range(rng.randint(2, 4)):
                values.append(drift(rng, values[-1], direction))
        elif equality == "nan" and r < 0.6:
            if scenario == "nan-root" and rng.random() < 0.6:
                value = copy.deepcopy(rng.choice(NAN_ROOT_VALUES))
            else:
                base = last if model.json_type(last) == "object" else exact_model(rng, "nan")
                value = nan_everywhere(rng, next_model(rng, base, values), selected)
            for _ in range(rng.randint(2, 3)):
                values.append(copy.deepcopy(value))
        elif scenario == "near-root" and model.json_type(last) != "object":
            values.append(rng.choice([rng.randint(-2, 6),
                                      [rng.randint(-1, 3) for _ in range(rng.randint(1, 3))]]))
        elif scenario == "nan-root" and rng.random() < 0.5:
            values.append(copy.deepcopy(rng.choice(NAN_ROOT_VALUES)))
        elif model.json_type(last) == "object":
            values.append(next_model(rng, last, values))
        else:
            values.append(exact_model(rng, equality if equality != "json" else None))
    return values[:n_runs]


class ExactDiffuserGen(DiffuserGen):
    """DiffuserGen with labelled maps and predicates; records the paths maps select."""

    def __init__(self, rng, sample, label_p, root_ops, fanout_maps, equality, gates):
        DiffuserGen.__init__(self, rng, sample)
        self.label_p = label_p
        self.root_ops = root_ops
        self.fanout_maps = fanout_maps  # None, or the share of labelled maps below the root
        self.equality = equality  # under near: maps select integers
        self.gates = gates        # more leaves that compare (into, intoWhen(changed))
        self.transforms = 0
        self.predicates = 0
        self.selected = []  # paths from the root value to what a map selects

    def transform_label(self):
        self.transforms += 1
        return "t%d" % self.transforms

    def predicate_label(self):
        self.predicates += 1
        return "p%d" % self.predicates

    def selector_for(self, sample):
        rng = self.rng
        if rng.random() < 0.12:
            return {"identity": True}
        paths = [p for p in int_paths(sample) if p]
        if self.equality == "near" and paths and rng.random() < 0.6:
            path = rng.choice(paths)
            if len(path) == 1 and isinstance(path[0], str):
                return {"field": path[0]}
            return {"path": list(path)}
        return DiffuserGen.selector_for(self, sample)

    def leaf(self, sample):
        rng = self.rng
        if self.gates and rng.random() < 0.6:
            # into, or intoWhen(changed): the gates that use the vector's equality
            if rng.random() < 0.75:
                node = {"op": "into", "effect": self.label()}
            else:
                node = {"op": "intoWhen", "predicate": "changed", "effect": self.label()}
            self.ops.add(node["op"])
        else:
            node = DiffuserGen.leaf(self, sample)
        if node["op"] == "intoWhen" and self.rng.random() < self.label_p:
            node["label"] = self.predicate_label()
        return node

    def map_node(self, depth, sample, max_depth, prefix, labelled):
        selector = self.selector_for(sample)
        sub = model.apply_selector(selector, sample)
        if prefix is not None:
            if "path" in selector:
                prefix = prefix + tuple(selector["path"])
            elif "field" in selector:
                prefix = prefix + (selector["field"],)
            if prefix:
                self.selected.append(prefix)
        node = {"op": "map", "selector": selector}
        if labelled:
            node["label"] = self.transform_label()
        node["child"] = self.node(depth + 1, sub, max_depth, prefix)
        self.ops.add("map")
        return node

    def node(self, depth, sample, max_depth, prefix=()):
        """prefix: the path from the root value to this node's value (None below invert)."""
        rng = self.rng
        if depth >= max_depth or (depth > 0 and rng.random() < 0.30):
            return self.leaf(sample)
        r = rng.random()
        if depth == 0:
            op = rng.choice(self.root_ops)
            if op == "leaf":
                return self.leaf(sample)
        elif self.shared and r < 0.12:
            self.ops.add("ref")
            return {"op": "ref", "ref": rng.choice(self.shared)}
        elif r < 0.28:
            op = "intoAll"
        elif r < 0.40:
            op = "intoAlways"
        elif r < 0.52:
            op = "intoWhen"
        elif r < 0.88:
            op = "map"
        else:
            op = "invert"
        self.ops.add(op)
        if op in ("intoAll", "intoAlways"):
            if depth == 0 and self.fanout_maps:
                children = [self.map_node(1, sample, max_depth, prefix,
                                          rng.random() < self.fanout_maps)
                            if rng.random() < 0.8 else self.node(1, sample, max_depth, prefix)
                            for _ in range(rng.choice([2, 3, 3, 4]))]
                return {"op": op, "children": children}
            n = rng.choice([1, 2, 2, 3, 3, 4]) if depth == 0 else rng.choice([0, 1, 2, 2, 3])
            return {"op": op, "children": [self.node(depth + 1, sample, max_depth, prefix)
                                           for _ in range(n)]}
        if op == "intoWhen":
            node = {"op": "intoWhen", "predicate": self.predicate_for(sample)}
            if rng.random() < self.label_p:
                node["label"] = self.predicate_label()
            node["child"] = self.node(depth + 1, sample, max_depth, prefix)
            return node
        if op == "map":
            return self.map_node(depth, sample, max_depth, prefix, rng.random() < self.label_p)
        return {"op": "invert",
                "child": self.node(depth + 1, model.logical_not(sample), max_depth, None)}


def user_labels(desc, out):
    """(effect labels, transform labels, predicate labels) of a description, in tree order."""
    effects, transforms, predicates = out
    if "effect" in desc:
        effects.append(desc["effect"])
    if "label" in desc:
        (transforms if desc["op"] == "map" else predicates).append(desc["label"])
    for child in desc.get("children", []):
        user_labels(child, out)
    if "child" in desc:
        user_labels(desc["child"], out)
    return out


def label_key(label):
    return (label[0], int(label[1:]))


def choose_fail(rng, scenario, probe, everything):
    """The fail list of a step: labels of user calls the step reaches (mostly), sometimes
    two or three of them (only the first in tree order fails), listed in random order."""
    reached = []
    for label, _ in probe["log"]:
        if label not in reached:
            reached.append(label)
    if not reached or rng.random() < 0.12:
        pool = list(everything)
    else:
        pool = reached
    preferred = []
    if scenario == "fanout-fail":
        # transforms reached after an effect already ran in this step
        seen_effect = False
        for label in reached:
            if label.startswith("e"):
                seen_effect = True
            elif label.startswith("t") and seen_effect:
                preferred.append(label)
    elif scenario == "predicate-fail":
        preferred = [label for label in reached if label.startswith("p")]
    first = rng.choice(preferred) if preferred and rng.random() < 0.75 else rng.choice(pool)
    fail = [first]
    extra = 0.7 if scenario == "multi-fail" else 0.15
    while rng.random() < extra and len(fail) < 3:
        others = [label for label in pool if label not in fail]
        if not others:
            break
        fail.append(rng.choice(others))
        extra /= 3
    rng.shuffle(fail)
    return fail


def gen_exact(rng, name, seed, index):
    scenario = SCENARIOS[(index - 1) % len(SCENARIOS)]
    if scenario in ("near-drift", "near-root"):
        equality = "near"
    elif scenario in ("nan-repeat", "nan-root"):
        equality = "nan"
    else:
        equality = rng.choice(["json", "json", "near", "nan"])
    boom = scenario in ("boom-root", "boom-below") or rng.random() < 0.10
    flavor = equality if equality != "json" else None

    if scenario == "near-root":
        first = rng.choice([rng.randint(-1, 2), [rng.randint(-1, 2) for _ in range(rng.randint(1, 3))],
                            exact_model(rng, "near")])
    elif scenario == "nan-root":
        first = copy.deepcopy(rng.choice(NAN_ROOT_VALUES))
    else:
        first = exact_model(rng, flavor)
    if scenario == "predicate-fail":
        label_p = 0.8
    elif scenario in ("fanout-fail", "multi-fail", "mixed"):
        label_p = 0.6
    else:
        label_p = 0.35
    root_ops = DEFAULT_ROOT_OPS
    if scenario in ("near-root", "nan-root", "boom-root"):
        root_ops = ["intoAll"] * 4 + ["leaf"] * 2 + ["intoAlways"] * 3 + ["intoWhen", "map"]
    elif scenario in ("fanout-fail", "nan-repeat", "boom-below"):
        root_ops = ["intoAlways", "intoAll"]
    fanout_maps = {"fanout-fail": 0.85, "nan-repeat": label_p, "boom-below": label_p}.get(scenario)
    gen = ExactDiffuserGen(rng, first, label_p, root_ops, fanout_maps, equality,
                           equality != "json" or boom)

    nodes = {}
    named = not boom and equality != "nan"
    n_shared = rng.choice([0, 0, 1, 1, 2]) if named else 0
    for i in range(n_shared):
        shared_name = "n%d" % (i + 1)
        nodes[shared_name] = gen.node(1, first, rng.choice([2, 3]), None)
        gen.shared.append(shared_name)
    root = gen.node(0, first, rng.choice([2, 3, 3, 4, 4]))
    counts = {}
    count_refs(root, counts)
    for desc in nodes.values():
        count_refs(desc, counts)
    for shared_name in gen.shared:
        missing = max(0, 2 - counts.get(shared_name, 0))
        if missing:
            gen.ops.add("ref")
            if root["op"] not in ("intoAll", "intoAlways") or "children" not in root:
                root = {"op": "intoAlways", "children": [root]}
            for _ in range(missing):
                root["children"].insert(rng.randint(0, len(root["children"])),
                                        {"op": "ref", "ref": shared_name})
    effects, transforms, predicates = [], [], []
    for desc in [root] + [nodes[k] for k in sorted(nodes)]:
        user_labels(desc, (effects, transforms, predicates))
    if not effects:
        label = gen.label()
        root = {"op": "intoAlways", "children": [root, {"op": "into", "effect": label}]}
        effects.append(label)
        gen.ops.update(["intoAlways", "into"])
    if equality == "json" and not boom and not transforms and not predicates:
        # Every exactness vector has a user call besides effects or an exact equality.
        label = gen.transform_label()
        root = {"op": "map", "selector": {"identity": True}, "label": label, "child": root}
        transforms.append(label)
        gen.ops.add("map")
    everything = sorted(set(effects + transforms + predicates), key=label_key)

    vector = {"format": model.FORMAT, "name": name, "kind": "diffuser", "description": "",
              "equality": equality, "nodes": nodes, "root": root, "steps": []}
    sim = model.DiffuserModel(vector)
    n_runs = rng.randint(5, 10)
    boom_runs = set()
    if boom:
        boom_runs.add(rng.randint(1, n_runs - 1))
        for i in range(n_runs):
            if rng.random() < (0.2 if i == 0 else 0.15):
                boom_runs.add(i)
    fail_p = {"fanout-fail": 0.45, "multi-fail": 0.5, "predicate-fail": 0.4}.get(scenario, 0.2)
    values = plan_values(rng, scenario, equality, first, n_runs, gen.selected)
    failures = booms = 0
    for i, plain in enumerate(values):
        current = plain
        if i in boom_runs:
            if scenario == "boom-root" or (model.json_type(current) != "object"
                                           and rng.random() < 0.5) or rng.random() < 0.15:
                current = "boom"
            else:
                # Mostly where an equality gate with a cache compares it (the step fails).
                failing = []
                for path in distinct(gen.selected):
                    candidate = put_path(current, path, "boom")
                    if copy.deepcopy(sim).step({"run": candidate})["error"] == model.EQUALITY_ERROR:
                        failing.append(candidate)
                if failing and rng.random() < 0.8:
                    current = rng.choice(failing)
                else:
                    current = sprinkle(rng, current, "boom", gen.selected)
            booms += 1
        step = {"run": copy.deepcopy(current)}
        if rng.random() < fail_p:
            probe = copy.deepcopy(sim).step({"run": current})
            step["fail"] = choose_fail(rng, scenario, probe, everything)
            failures += 1
        step["expect"] = sim.step(step)
        vector["steps"].append(step)
        # After a failure (or a "boom"), often run the same value again.
        if (step["expect"]["error"] is not None and rng.random() < 0.5
                and len(vector["steps"]) < 12):
            retry = {"run": copy.deepcopy(current)}
            retry["expect"] = sim.step(retry)
            vector["steps"].append(retry)

    vector["description"] = (
        "Generated exactness vector (seed %d, index %d, scenario %s): equality %s, %d runs, "
        "%d with a fail list, %d with \"boom\"; %d labelled transforms, %d labelled "
        "predicates; ops: %s." % (seed, index, scenario, equality, len(vector["steps"]),
                                 failures, booms, len(transforms), len(predicates),
                                 ", ".join(sorted(gen.ops))))
    return vector


# ---------------------------------------------------------------------------------------
# List vectors (conformance/list/): the keyed list diff (README section 10).
#
# A third family with its own seed and its own random streams: nothing above this line
# is changed by it, so conformance/generated/ and conformance/exact/ stay byte-identical.

LIST_SEED = 20261203
LIST_COUNT = 200
LIST_OUT = os.path.join(ROOT, "conformance", "list")

# Vector i uses LIST_SCENARIOS[(i - 1) % len(LIST_SCENARIOS)].
LIST_SCENARIOS = ["small-alphabet", "unique-edits", "shuffle", "reverse", "unrelated",
                  "one-empty", "unchanged", "mixed-keys", "prefix-suffix", "large"]
LIST_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Contents: mostly small integers (0 is the usual one), sometimes other JSON values,
# including pairs that differ only by type (1 and true, 0 and null) or by member order.
LIST_CONTENTS = [0, 0, 0, 0, 1, 2, 3, True, False, None, "", "x", [], [0], [1, 0],
                 {"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1}, {"a": [1, {"b": None}]}]


def list_key(rng, style, index):
    """Key number `index` in a style: "int", "str" or "mixed" (1 and "1" both occur)."""
    if style == "int":
        return index
    if style == "str":
        if index < len(LIST_LETTERS):
            return LIST_LETTERS[index]
        return "k%d" % index
    return index if rng.random() < 0.5 else str(index)


def list_content(rng, plain=0.7):
    return 0 if rng.random() < plain else rng.choice(LIST_CONTENTS)


def list_random(rng, count, alphabet, style):
    return [[list_key(rng, style, rng.randrange(max(alphabet, 1))), list_content(rng)]
            for _ in range(count)]


def list_unique(rng, count, style, spare=0):
    numbers = list(range(count + spare))
    rng.shuffle(numbers)
    keys = []
    for n in numbers:
        key = list_key(rng, style, n)
        if not any(model.json_equal(key, k) for k in keys):
            keys.append(key)
        if len(keys) == count:
            break
    return [[k, list_content(rng)] for k in keys]


def list_edited(rng, items, alphabet, style, unique, edits):
    """items after `edits` random edits: deletes, inserts, moves, content changes, swaps
    and block moves."""
    result = copy.deepcopy(items)
    fresh = alphabet
    for _ in range(edits):
        r = rng.randrange(6)
        if r == 0 and result:
            result.pop(rng.randrange(len(result)))
        elif r == 1:
            if unique:
                key = list_key(rng, style, fresh)
                fresh += 1
            else:
                key = list_key(rng, style, rng.randrange(max(alphabet, 1)))
            result.insert(rng.randint(0, len(result)), [key, list_content(rng)])
        elif r == 2 and result:
            item = result.pop(rng.randrange(len(result)))
            result.insert(rng.randint(0, len(result)), item)
        elif r == 3 and result:
            i = rng.randrange(len(result))
            result[i] = [result[i][0], list_content(rng, plain=0.3)]
        elif r == 4 and len(result) > 1:
            i, j = rng.randrange(len(result)), rng.randrange(len(result))
            result[i], result[j] = result[j], result[i]
        elif r == 5 and len(result) > 1:
            start = rng.randrange(len(result))
            end = min(len(result), start + rng.randint(1, 5))
            block = result[start:end]
            del result[start:end]
            at = rng.randint(0, len(result))
            result[at:at] = block
    return result


def list_change_contents(rng, items, p):
    return [[k, list_content(rng, plain=0.3)] if rng.random() < p else [k, c] for k, c in items]


def gen_list(rng, name, seed, index):
    scenario = LIST_SCENARIOS[(index - 1) % len(LIST_SCENARIOS)]
    style = rng.choice(["int", "str", "str", "mixed"])
    if scenario == "small-alphabet":
        alphabet = rng.choice([1, 2, 3, 4, 5])
        old = list_random(rng, rng.randint(0, 12), alphabet, style)
        new = list_edited(rng, old, alphabet, style, False, rng.randint(1, 8))
    elif scenario == "unique-edits":
        count = rng.randint(0, 30)
        old = list_unique(rng, count, style, spare=count)
        new = list_edited(rng, old, 2 * count + 1, style, True, rng.randint(1, 10))
    elif scenario == "shuffle":
        old = list_unique(rng, rng.randint(2, 24), style)
        new = copy.deepcopy(old)
        rng.shuffle(new)
        new = list_change_contents(rng, new, rng.choice([0, 0.1, 0.3]))
    elif scenario == "reverse":
        if rng.random() < 0.6:
            old = list_unique(rng, rng.randint(2, 24), style)
        else:
            old = list_random(rng, rng.randint(2, 16), rng.randint(2, 6), style)
        new = list_change_contents(rng, list(reversed(copy.deepcopy(old))), rng.choice([0, 0.2]))
    elif scenario == "unrelated":
        alphabet = rng.choice([3, 6, 12, 40])
        old = list_random(rng, rng.randint(0, 16), alphabet, style)
        new = list_random(rng, rng.randint(0, 16), alphabet, style)
    elif scenario == "one-empty":
        items = list_random(rng, rng.randint(0, 10), rng.choice([2, 5, 20]), style)
        old, new = (items, []) if rng.random() < 0.5 else ([], items)
    elif scenario == "unchanged":
        old = list_random(rng, rng.randint(0, 20), rng.choice([2, 5, 30]), style)
        new = copy.deepcopy(old)
        if rng.random() < 0.6:
            new = list_change_contents(rng, new, rng.choice([0.1, 0.4]))
    elif scenario == "mixed-keys":
        alphabet = rng.choice([2, 3, 4])
        old = list_random(rng, rng.randint(1, 12), alphabet, "mixed")
        new = list_edited(rng, old, alphabet, "mixed", False, rng.randint(0, 6))
        if rng.random() < 0.5:
            rng.shuffle(new)
    elif scenario == "prefix-suffix":
        # The same key at both ends and in the middle: the prefix and suffix pair in place
        # before occurrences are counted in the middle.
        alphabet = rng.choice([2, 3])
        prefix = list_random(rng, rng.randint(0, 3), alphabet, style)
        suffix = list_random(rng, rng.randint(0, 3), alphabet, style)
        middle_old = list_random(rng, rng.randint(0, 5), alphabet, style)
        middle_new = list_random(rng, rng.randint(0, 5), alphabet, style)
        old = copy.deepcopy(prefix) + middle_old + copy.deepcopy(suffix)
        new = list_change_contents(rng, prefix, 0.2) + middle_new + list_change_contents(rng, suffix, 0.2)
    else:  # large: a miniature of the benchmark's W1 (remove a run, insert one, shuffle the front)
        count = rng.randint(40, 64)
        old = list_unique(rng, count, style, spare=count)
        new = copy.deepcopy(old)
        a = rng.randrange(count // 2)
        b = a + rng.randint(1, count // 4)
        del new[a:b]
        fresh = [[list_key(rng, style, 2 * count + 1 + t), list_content(rng)]
                 for t in range(rng.randint(0, count // 4))]
        fresh = [f for f in fresh if not any(model.json_equal(f[0], k) for k, _ in old)]
        new[a:a] = fresh
        front = rng.randint(2, 12)
        head = new[:front]
        rng.shuffle(head)
        new[:front] = head
        new = list_change_contents(rng, new, rng.choice([0, 0.05, 0.2]))
    expect = model.list_expect(old, new)
    facts = []
    for key in ("deletes", "inserts", "moves", "updates"):
        facts.append("%d %s" % (len(expect[key]), key))
    if expect["hasDuplicates"]:
        facts.append("duplicates")
    return {
        "format": 1,
        "name": name,
        "kind": "list",
        "description": "Generated list vector (seed %d, index %d, scenario %s, %s keys): "
                       "%d -> %d items, %s." % (seed, index, scenario, style, len(old), len(new),
                                                ", ".join(facts)),
        "old": old,
        "new": new,
        "expect": expect,
    }


def format_list_vector(vector):
    """Deterministic text: sorted keys, each list on one line, one line per expectation."""
    def dump(value):
        return json.dumps(value, sort_keys=True)
    lines = ["{"]
    keys = sorted(vector)
    for n, key in enumerate(keys):
        comma = "," if n + 1 < len(keys) else ""
        value = vector[key]
        if key == "expect":
            lines.append('  "expect": {')
            names = sorted(value)
            for k, name in enumerate(names):
                tail = "," if k + 1 < len(names) else ""
                lines.append("    %s: %s%s" % (dump(name), dump(value[name]), tail))
            lines.append("  }" + comma)
        else:
            lines.append("  %s: %s%s" % (dump(key), dump(value), comma))
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate_list(seed, index):
    rng = random.Random(seed * 1000003 + index)
    vector = gen_list(rng, "list-%04d" % index, seed, index)
    problems = model.check_vector(json.loads(format_list_vector(vector)))
    if problems:
        raise SystemExit("internal error in %s: %s" % (vector["name"], problems))
    return vector


# ---------------------------------------------------------------------------------------
# Output


STEP_KEY_ORDER = ["run", "connect", "dispose", "emit", "value", "fail", "comment", "expect"]


def format_step(step):
    """One line; the step's keys in reading order, every nested object with sorted keys."""
    def dump(value):
        return json.dumps(value, sort_keys=True)
    parts = []
    for key in STEP_KEY_ORDER:
        if key not in step:
            continue
        if key == "expect":
            expect = step["expect"]
            value = '{"log": %s, "error": %s}' % (dump(expect["log"]), dump(expect["error"]))
        else:
            value = dump(step[key])
        parts.append("%s: %s" % (dump(key), value))
    assert len(parts) == len(step)
    return "{" + ", ".join(parts) + "}"


def format_vector(vector):
    """Deterministic text: sorted keys, the tree indented, one line per step."""
    lines = ["{"]
    keys = sorted(vector)
    for n, key in enumerate(keys):
        comma = "," if n + 1 < len(keys) else ""
        value = vector[key]
        if key == "steps":
            lines.append('  "steps": [')
            for i, step in enumerate(value):
                tail = "," if i + 1 < len(value) else ""
                lines.append("    " + format_step(step) + tail)
            lines.append("  ]" + comma)
        else:
            text = json.dumps(value, sort_keys=True, indent=2)
            text = text.replace("\n", "\n  ")
            lines.append("  %s: %s%s" % (json.dumps(key), text, comma))
    lines.append("}")
    return "\n".join(lines) + "\n"


def self_check(vector):
    """The vector is well formed and agrees with the model."""
    problems = model.check_vector(json.loads(format_vector(vector)))
    if problems:
        raise SystemExit("internal error in %s: %s" % (vector["name"], problems))
    return vector


def generate_one(seed, index):
    rng = random.Random(seed * 1000003 + index)
    name = "gen-%04d" % index
    if rng.random() < FUSER_SHARE:
        vector = gen_fuser(rng, name, seed, index)
    else:
        vector = gen_diffuser(rng, name, seed, index)
    return self_check(vector)


def generate_exact(seed, index):
    rng = random.Random(seed * 1000003 + index)
    return self_check(gen_exact(rng, "exact-%04d" % index, seed, index))


LOOP_SEED = 20261219
LOOP_COUNT = 170
LOOP_OUT = os.path.join(ROOT, "conformance", "loop")


RESTART_SEED = 20270113
RESTART_COUNT = 30


def generate_loop(seed, index, make=gen_loop_vectors.generate_loop):
    vector = make(seed, index)
    problems = model.check_vector(json.loads(gen_loop_vectors.format_loop_vector(vector)))
    if problems:
        raise SystemExit("internal error in %s: %s" % (vector["name"], problems))
    return vector


def generate_restart(seed, index):
    return generate_loop(seed, index, gen_loop_vectors.generate_restart)


# family -> (file name prefix, generator, default seed, default count, default directory,
# formatter)
FAMILIES = {
    "generated": ("gen-", generate_one, DEFAULT_SEED, DEFAULT_COUNT, DEFAULT_OUT, format_vector),
    "exact": ("exact-", generate_exact, EXACT_SEED, EXACT_COUNT, EXACT_OUT, format_vector),
    "list": ("list-", generate_list, LIST_SEED, LIST_COUNT, LIST_OUT, format_list_vector),
    "loop": ("loop-", generate_loop, LOOP_SEED, LOOP_COUNT, LOOP_OUT, gen_loop_vectors.format_loop_vector),
    "restart": ("restart-", generate_restart, RESTART_SEED, RESTART_COUNT, LOOP_OUT,
                gen_loop_vectors.format_loop_vector),
}


def write_all(seed, count, out, family="generated"):
    prefix, generate = FAMILIES[family][:2]
    formatter = FAMILIES[family][5]
    os.makedirs(out, exist_ok=True)
    for entry in os.listdir(out):
        if entry.startswith(prefix) and entry.endswith(".json"):
            os.remove(os.path.join(out, entry))
    for index in range(1, count + 1):
        vector = generate(seed, index)
        path = os.path.join(out, vector["name"] + ".json")
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write(formatter(vector))


def check(seed, count, out, family="generated"):
    tmp = tempfile.mkdtemp(prefix="diffuser-vectors-")
    try:
        write_all(seed, count, tmp, family)
        fresh = sorted(e for e in os.listdir(tmp) if e.endswith(".json"))
        # Another family's files may share the directory (loop- and restart- do).
        others = tuple(FAMILIES[f][0] for f in FAMILIES if f != family)
        present = sorted(e for e in os.listdir(out) if e.endswith(".json") and not e.startswith(others)) \
            if os.path.isdir(out) else []
        problems = []
        for entry in sorted(set(fresh) - set(present)):
            problems.append("missing: %s" % entry)
        for entry in sorted(set(present) - set(fresh)):
            problems.append("unexpected: %s" % entry)
        for entry in sorted(set(fresh) & set(present)):
            if not filecmp.cmp(os.path.join(tmp, entry), os.path.join(out, entry), shallow=False):
                problems.append("differs: %s" % entry)
        for p in problems:
            print(p)
        if problems:
            print("%d problem(s) in %s: regenerate with python3 scripts/gen_vectors.py"
                  % (len(problems), os.path.relpath(out)))
            return 1
        print("%d %s vectors up to date in %s" % (len(fresh), family, os.path.relpath(out)))
        return 0
    finally:
        shutil.rmtree(tmp)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=["all"] + list(FAMILIES), default=None,
                        help="which family: generated (gen-NNNN in conformance/generated), "
                        "exact (exact-NNNN in conformance/exact), list (list-NNNN in "
                        "conformance/list), loop (loop-NNNN in conformance/loop), restart "
                        "(restart-NNNN in conformance/loop) or all (the default, unless --seed, "
                        "--count or --out is given: then generated)")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed (default %d for generated, %d for exact, %d for list, %d "
                        "for loop, %d for restart)" % (DEFAULT_SEED, EXACT_SEED, LIST_SEED, LOOP_SEED, RESTART_SEED))
    parser.add_argument("--count", type=int, default=None,
                        help="number of vectors (default %d for generated, %d for exact, %d "
                        "for list, %d for loop, %d for restart)"
                        % (DEFAULT_COUNT, EXACT_COUNT, LIST_COUNT, LOOP_COUNT, RESTART_COUNT))
    parser.add_argument("--out", default=None,
                        help="output directory (default conformance/generated, "
                        "conformance/exact, conformance/list or conformance/loop)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary directory and compare with --out")
    args = parser.parse_args(argv)
    overrides = args.seed is not None or args.count is not None or args.out is not None
    family = args.family or ("generated" if overrides else "all")
    if family == "all" and overrides:
        parser.error("--seed, --count and --out apply to one family: add --family")
    families = list(FAMILIES) if family == "all" else [family]
    status = 0
    for name in families:
        _, _, seed, count, out, _ = FAMILIES[name]
        seed = seed if args.seed is None else args.seed
        count = count if args.count is None else args.count
        out = out if args.out is None else args.out
        if count < 1 or count > 9999:
            parser.error("--count must be between 1 and 9999")
        if args.check:
            status = max(status, check(seed, count, out, name))
        else:
            write_all(seed, count, out, name)
            print("wrote %d %s vectors to %s" % (count, name, os.path.relpath(out)))
    return status


if __name__ == "__main__":
    sys.exit(main())
