#!/usr/bin/env python3
"""Seeded generator of random composite conformance vectors.

    python3 scripts/gen_vectors.py                 # (re)writes conformance/generated/
    python3 scripts/gen_vectors.py --seed 7 --count 100 --out /tmp/vectors
    python3 scripts/gen_vectors.py --check         # exit 1 if the committed files differ

The same seed and count always produce byte-identical files. Vector i is generated from
its own random stream (derived from the seed and i), so changing --count does not change
the vectors that are kept. Expected logs come from scripts/conformance_model.py.
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
            step["fail"] = sorted(set(fail), key=lambda s: int(s[1:]))
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


def generate_one(seed, index):
    rng = random.Random(seed * 1000003 + index)
    name = "gen-%04d" % index
    if rng.random() < FUSER_SHARE:
        vector = gen_fuser(rng, name, seed, index)
    else:
        vector = gen_diffuser(rng, name, seed, index)
    # Self-check: the vector is well formed and agrees with the model.
    problems = model.check_vector(json.loads(format_vector(vector)))
    if problems:
        raise SystemExit("internal error in %s: %s" % (name, problems))
    return vector


def write_all(seed, count, out):
    os.makedirs(out, exist_ok=True)
    for entry in os.listdir(out):
        if entry.startswith("gen-") and entry.endswith(".json"):
            os.remove(os.path.join(out, entry))
    for index in range(1, count + 1):
        vector = generate_one(seed, index)
        path = os.path.join(out, vector["name"] + ".json")
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write(format_vector(vector))


def check(seed, count, out):
    tmp = tempfile.mkdtemp(prefix="diffuser-vectors-")
    try:
        write_all(seed, count, tmp)
        fresh = sorted(e for e in os.listdir(tmp) if e.endswith(".json"))
        present = sorted(e for e in os.listdir(out) if e.endswith(".json")) if os.path.isdir(out) else []
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
            print("%d problem(s): regenerate with python3 scripts/gen_vectors.py" % len(problems))
            return 1
        print("%d generated vectors up to date" % len(fresh))
        return 0
    finally:
        shutil.rmtree(tmp)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="random seed (default %(default)s)")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT,
                        help="number of vectors (default %(default)s)")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="output directory (default conformance/generated)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary directory and compare with --out")
    args = parser.parse_args(argv)
    if args.count < 1 or args.count > 9999:
        parser.error("--count must be between 1 and 9999")
    if args.check:
        return check(args.seed, args.count, args.out)
    write_all(args.seed, args.count, args.out)
    print("wrote %d vectors to %s" % (args.count, os.path.relpath(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
