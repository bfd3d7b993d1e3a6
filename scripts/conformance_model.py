#!/usr/bin/env python3
"""Executable model of Diffuser and Fuser semantics for the conformance vectors.

This module is independent of the library: it restates the semantics described in
conformance/README.md in a few hundred lines of plain Python, so that expected logs can be
computed (scripts/gen_vectors.py) and every vector in the corpus can be checked
(scripts/check_vectors.py).

Public entry points:

    validate_vector(vector)        raises VectorError if the vector is malformed
    run_vector(vector)             -> list of {"log": [...], "error": None|label}, one per step
    check_vector(vector)           -> list of mismatch messages (empty when the vector passes)
    json_equal(a, b)               deep JSON equality (bool is never equal to an integer)
    vector_equal(equality, a, b)   a diffuser vector's equality: "json", "near" or "nan"

Values are the Python objects produced by json.loads: None, bool, int, str, list, dict.
Floats are not allowed anywhere in a vector.
"""

import copy
import re

FORMAT = 1

LABEL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
FIELD_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_LABELS = ("connect", "dispose")
EQUALITY_ERROR = "equality"  # the error of a failing equality; never a diffuser label
DIFFUSER_RESERVED_LABELS = RESERVED_LABELS + (EQUALITY_ERROR,)
BOOM = "boom"  # an equality gate's comparison fails when the new value is this string
NAN = "NaN"    # under the "nan" equality this string is equal to nothing, itself included
EQUALITIES = ("json", "near", "nan")
INT_LIMIT = 2 ** 31  # every integer in a vector satisfies -2^31 <= x < 2^31

PREDICATES = ("changed", "always", "never", "increased", "decreased")
PLAIN_TRANSFORMS = ("identity", "double", "negate", "not", "length")
PARAM_TRANSFORMS = ("field", "wrap")

DIFFUSER_OPS = ("intoAlways", "intoWhen", "into", "intoOnce", "intoAll", "map", "invert", "ref")
FUSER_OPS = ("from", "fromAll", "extract", "extractConstant", "extractUnlessNull", "ref")


class VectorError(Exception):
    """The vector is malformed (not a semantic mismatch)."""


class EffectFailure(Exception):
    """A user call failed: an effect, a labelled transform or a labelled predicate whose
    label is in the step's "fail" list (label: that label), or an equality gate's comparison
    of the value "boom" (label: "equality")."""

    def __init__(self, label):
        Exception.__init__(self, label)
        self.label = label


# ---------------------------------------------------------------------------------------
# JSON values


def json_type(value):
    """The JSON type of a value: null, bool, int, string, array or object."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise VectorError("not a vector value (floats are not allowed): %r" % (value,))


def json_equal(a, b):
    """Deep JSON equality. Object member order is irrelevant; array order matters;
    true is not equal to 1, false is not equal to 0, null equals only null."""
    ta, tb = json_type(a), json_type(b)
    if ta != tb:
        return False
    if ta == "array":
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if ta == "object":
        return set(a.keys()) == set(b.keys()) and all(json_equal(a[k], b[k]) for k in a)
    return a == b


def near_equal(a, b):
    """The "near" equality: JSON equality, except that two integers (not booleans) are
    equal when they differ by at most 1, also inside arrays and objects. Not transitive."""
    ta, tb = json_type(a), json_type(b)
    if ta != tb:
        return False
    if ta == "int":
        return abs(a - b) <= 1
    if ta == "array":
        return len(a) == len(b) and all(near_equal(x, y) for x, y in zip(a, b))
    if ta == "object":
        return set(a.keys()) == set(b.keys()) and all(near_equal(a[k], b[k]) for k in a)
    return a == b


def nan_equal(a, b):
    """The "nan" equality: JSON equality, except that the string "NaN" is equal to
    nothing, itself included, also inside arrays and objects. Not reflexive."""
    ta, tb = json_type(a), json_type(b)
    if ta != tb:
        return False
    if ta == "string":
        return a == b and a != NAN
    if ta == "array":
        return len(a) == len(b) and all(nan_equal(x, y) for x, y in zip(a, b))
    if ta == "object":
        return set(a.keys()) == set(b.keys()) and all(nan_equal(a[k], b[k]) for k in a)
    return a == b


_EQUALITY_FUNCTIONS = {"json": json_equal, "near": near_equal, "nan": nan_equal}


def vector_equal(equality, a, b):
    """The relation of a diffuser vector's equality (the top-level "equality" key, default
    "json"). It never fails: the "boom" failure belongs to equality gates (_Context.equal)."""
    return _EQUALITY_FUNCTIONS[equality](a, b)


def contains_string(value, text):
    """True if the string text occurs as a value (not as an object key) anywhere in value."""
    t = json_type(value)
    if t == "string":
        return value == text
    if t == "array":
        return any(contains_string(item, text) for item in value)
    if t == "object":
        return any(contains_string(item, text) for item in value.values())
    return False


def check_value(value, where):
    """Raises VectorError unless value is a valid vector value (no floats, ints in range)."""
    t = json_type(value)
    if t == "int" and not (-INT_LIMIT <= value < INT_LIMIT):
        raise VectorError("%s: integer out of range: %d" % (where, value))
    if t == "string" and not all(0x20 <= ord(ch) < 0x7F for ch in value):
        raise VectorError("%s: strings must be printable ASCII: %r" % (where, value))
    if t == "array":
        for i, item in enumerate(value):
            check_value(item, "%s[%d]" % (where, i))
    if t == "object":
        for key, item in value.items():
            if not all(0x20 <= ord(ch) < 0x7F for ch in key):
                raise VectorError("%s: keys must be printable ASCII: %r" % (where, key))
            check_value(item, "%s.%s" % (where, key))


def is_int(value):
    return json_type(value) == "int"


def truthy(value):
    """null and false are false; every other value (true, any integer, any string, any
    array, any object) is true."""
    return not (value is None or value is False)


def logical_not(value):
    """The `not` of invert and of the `not` transform: true for null and false, false
    for everything else."""
    return not truthy(value)


# ---------------------------------------------------------------------------------------
# Selectors (diffuser `map`) and transforms (fuser `extract`, `extractUnlessNull`)


def apply_selector(selector, value):
    if "identity" in selector:
        return value
    if "field" in selector:
        if json_type(value) == "object":
            return value.get(selector["field"])
        return None
    if "path" in selector:
        current = value
        for step in selector["path"]:
            if isinstance(step, str):
                if json_type(current) == "object" and step in current:
                    current = current[step]
                else:
                    return None
            else:
                if json_type(current) == "array" and 0 <= step < len(current):
                    current = current[step]
                else:
                    return None
        return current
    raise VectorError("unknown selector %r" % (selector,))


def apply_transform(transform, value):
    name, _, param = transform.partition(":")
    if name == "identity":
        return value
    if name == "double":
        return value * 2 if is_int(value) else None
    if name == "negate":
        return -value if is_int(value) else None
    if name == "not":
        return logical_not(value)
    if name == "length":
        if json_type(value) in ("string", "array", "object"):
            return len(value)
        return None
    if name == "field":
        if json_type(value) == "object":
            return value.get(param)
        return None
    if name == "wrap":
        return {param: value}
    raise VectorError("unknown transform %r" % (transform,))


def predicate(name, old, new, equality="json"):
    if name == "changed":
        return not vector_equal(equality, old, new)
    if name == "always":
        return True
    if name == "never":
        return False
    if name == "increased":
        return is_int(old) and is_int(new) and new > old
    if name == "decreased":
        return is_int(old) and is_int(new) and new < old
    raise VectorError("unknown predicate %r" % (name,))


# ---------------------------------------------------------------------------------------
# Validation


def _expect_keys(obj, required, optional, where):
    if not isinstance(obj, dict):
        raise VectorError("%s: expected an object" % where)
    missing = [k for k in required if k not in obj]
    if missing:
        raise VectorError("%s: missing key(s) %s" % (where, ", ".join(missing)))
    unknown = sorted(k for k in obj if k not in required and k not in optional)
    if unknown:
        raise VectorError("%s: unknown key(s) %s" % (where, ", ".join(unknown)))


def _expect_label(label, where):
    if not isinstance(label, str) or not LABEL_RE.match(label):
        raise VectorError("%s: bad label %r" % (where, label))


def _expect_effect_label(label, where, reserved=RESERVED_LABELS):
    _expect_label(label, where)
    if label in reserved:
        raise VectorError("%s: label %r is reserved" % (where, label))


def _validate_selector(selector, where):
    if not isinstance(selector, dict) or len(selector) != 1:
        raise VectorError("%s: a selector is an object with exactly one key" % where)
    (key, arg), = selector.items()
    if key == "identity":
        if arg is not True:
            raise VectorError("%s: identity selector must be {\"identity\": true}" % where)
    elif key == "field":
        if not isinstance(arg, str) or not FIELD_NAME_RE.match(arg):
            raise VectorError("%s: bad field name %r" % (where, arg))
    elif key == "path":
        if not isinstance(arg, list):
            raise VectorError("%s: path must be an array" % where)
        for step in arg:
            if isinstance(step, str):
                if not FIELD_NAME_RE.match(step):
                    raise VectorError("%s: bad path key %r" % (where, step))
            elif json_type(step) == "int":
                if step < 0:
                    raise VectorError("%s: negative path index" % where)
            else:
                raise VectorError("%s: path steps are strings or integers" % where)
    else:
        raise VectorError("%s: unknown selector %r" % (where, key))


def _validate_transform(transform, where):
    if not isinstance(transform, str):
        raise VectorError("%s: a transform is a string" % where)
    name, colon, param = transform.partition(":")
    if name in PLAIN_TRANSFORMS and not colon:
        return
    if name in PARAM_TRANSFORMS and colon and FIELD_NAME_RE.match(param):
        return
    raise VectorError("%s: unknown transform %r" % (where, transform))


def _validate_diffuser_node(node, where, names, labels, calls):
    """labels collects the effect labels (a set), calls the transform and predicate labels
    in order of occurrence (a list, so that duplicates can be detected)."""
    if not isinstance(node, dict) or "op" not in node:
        raise VectorError("%s: a node is an object with an \"op\"" % where)
    op = node["op"]
    if op == "intoAlways":
        if "effect" in node:
            _expect_keys(node, ("op", "effect"), (), where)
        else:
            _expect_keys(node, ("op", "children"), (), where)
    elif op == "intoWhen":
        if "effect" in node:
            _expect_keys(node, ("op", "predicate", "effect"), ("label",), where)
        else:
            _expect_keys(node, ("op", "predicate", "child"), ("label",), where)
        if node["predicate"] not in PREDICATES:
            raise VectorError("%s: unknown predicate %r" % (where, node["predicate"]))
    elif op in ("into", "intoOnce"):
        _expect_keys(node, ("op", "effect"), (), where)
    elif op == "intoAll":
        _expect_keys(node, ("op", "children"), (), where)
    elif op == "map":
        _expect_keys(node, ("op", "selector", "child"), ("label",), where)
        _validate_selector(node["selector"], where + ".selector")
    elif op == "invert":
        _expect_keys(node, ("op", "child"), (), where)
    elif op == "ref":
        _expect_keys(node, ("op", "ref"), (), where)
        if node["ref"] not in names:
            raise VectorError("%s: unknown ref %r" % (where, node["ref"]))
    else:
        raise VectorError("%s: unknown diffuser op %r" % (where, op))
    if "effect" in node:
        _expect_effect_label(node["effect"], where + ".effect", DIFFUSER_RESERVED_LABELS)
        labels.add(node["effect"])
    if "label" in node:
        _expect_effect_label(node["label"], where + ".label", DIFFUSER_RESERVED_LABELS)
        calls.append(node["label"])
    if "children" in node:
        if not isinstance(node["children"], list):
            raise VectorError("%s: children must be an array" % where)
        for i, child in enumerate(node["children"]):
            _validate_diffuser_node(child, "%s.children[%d]" % (where, i), names, labels, calls)
    if "child" in node:
        _validate_diffuser_node(node["child"], where + ".child", names, labels, calls)


def _validate_fuser_node(node, where, names, sources):
    if not isinstance(node, dict) or "op" not in node:
        raise VectorError("%s: a node is an object with an \"op\"" % where)
    op = node["op"]
    if op == "from":
        _expect_keys(node, ("op", "source"), (), where)
        _expect_label(node["source"], where + ".source")
        sources.add(node["source"])
    elif op == "fromAll":
        _expect_keys(node, ("op", "children"), (), where)
        if not isinstance(node["children"], list):
            raise VectorError("%s: children must be an array" % where)
        for i, child in enumerate(node["children"]):
            _validate_fuser_node(child, "%s.children[%d]" % (where, i), names, sources)
    elif op in ("extract", "extractUnlessNull"):
        _expect_keys(node, ("op", "transform", "child"), (), where)
        _validate_transform(node["transform"], where + ".transform")
    elif op == "extractConstant":
        _expect_keys(node, ("op", "constant", "child"), (), where)
        check_value(node["constant"], where + ".constant")
    elif op == "ref":
        _expect_keys(node, ("op", "ref"), (), where)
        if node["ref"] not in names:
            raise VectorError("%s: unknown ref %r" % (where, node["ref"]))
    else:
        raise VectorError("%s: unknown fuser op %r" % (where, op))
    if "child" in node:
        _validate_fuser_node(node["child"], where + ".child", names, sources)


def _refs_of(node):
    if not isinstance(node, dict):
        return
    if node.get("op") == "ref":
        yield node["ref"]
    for child in node.get("children", []) if isinstance(node.get("children"), list) else []:
        for r in _refs_of(child):
            yield r
    if "child" in node:
        for r in _refs_of(node["child"]):
            yield r


def _check_acyclic(nodes):
    state = {}

    def visit(name, stack):
        if state.get(name) == "done":
            return
        if state.get(name) == "active":
            raise VectorError("nodes: reference cycle through %s" % " -> ".join(stack + [name]))
        state[name] = "active"
        for r in _refs_of(nodes[name]):
            visit(r, stack + [name])
        state[name] = "done"

    for name in sorted(nodes):
        visit(name, [])


def _validate_expect(expect, where, errors):
    """errors: the labels the step may report (its fail list, and "equality" for a
    diffuser step)."""
    _expect_keys(expect, ("log", "error"), (), where)
    if not isinstance(expect["log"], list):
        raise VectorError("%s.log: expected an array" % where)
    for i, entry in enumerate(expect["log"]):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise VectorError("%s.log[%d]: an entry is [label, value]" % (where, i))
        check_value(entry[1], "%s.log[%d]" % (where, i))
    if expect["error"] is not None and expect["error"] not in errors:
        raise VectorError("%s.error: %r is neither null nor a label of the step's fail list%s"
                          % (where, expect["error"],
                             " nor \"equality\"" if EQUALITY_ERROR in errors else ""))


def _validate_fail(step, where, known):
    fail = step.get("fail", [])
    if not isinstance(fail, list):
        raise VectorError("%s.fail: expected an array" % where)
    for label in fail:
        _expect_effect_label(label, where + ".fail")
        if label not in known:
            raise VectorError("%s.fail: label %r does not occur in the vector" % (where, label))


def validate_vector(vector):
    """Raises VectorError if the vector does not follow conformance/README.md."""
    if not isinstance(vector, dict):
        raise VectorError("a vector is a JSON object")
    kind = vector.get("kind")
    if kind == "diffuser":
        _expect_keys(vector, ("format", "name", "kind", "description", "nodes", "root", "steps"),
                     ("equality",), "vector")
    elif kind == "fuser":
        _expect_keys(vector, ("format", "name", "kind", "description", "sources", "nodes",
                              "root", "steps"), (), "vector")
    else:
        raise VectorError("vector.kind must be \"diffuser\" or \"fuser\"")
    if vector["format"] != FORMAT or json_type(vector["format"]) != "int":
        raise VectorError("vector.format must be %d" % FORMAT)
    if not isinstance(vector["name"], str) or not re.match(r"^[a-z0-9][a-z0-9-]*$", vector["name"]):
        raise VectorError("vector.name must match [a-z0-9][a-z0-9-]*")
    if not isinstance(vector["description"], str):
        raise VectorError("vector.description must be a string")
    nodes = vector["nodes"]
    if not isinstance(nodes, dict):
        raise VectorError("vector.nodes must be an object")
    for name in nodes:
        _expect_label(name, "nodes key")
    if not isinstance(vector["steps"], list) or not vector["steps"]:
        raise VectorError("vector.steps must be a non-empty array")

    if kind == "diffuser":
        equality = vector.get("equality", "json")
        if not isinstance(equality, str) or equality not in EQUALITIES:
            raise VectorError("vector.equality must be one of %s" % ", ".join(EQUALITIES))
        labels = set()
        calls = []
        for name in sorted(nodes):
            _validate_diffuser_node(nodes[name], "nodes." + name, nodes, labels, calls)
        _validate_diffuser_node(vector["root"], "root", nodes, labels, calls)
        _check_acyclic(nodes)
        seen = set()
        for label in calls:
            if label in seen:
                raise VectorError("label %r labels two transforms/predicates" % label)
            if label in labels:
                raise VectorError("label %r labels a transform/predicate and an effect" % label)
            seen.add(label)
        boom = False
        for i, step in enumerate(vector["steps"]):
            where = "steps[%d]" % i
            _expect_keys(step, ("run", "expect"), ("fail", "comment"), where)
            check_value(step["run"], where + ".run")
            boom = boom or contains_string(step["run"], BOOM)
            _validate_fail(step, where, labels | seen)
            _validate_expect(step["expect"], where + ".expect",
                             set(step.get("fail", [])) | set([EQUALITY_ERROR]))
        if (equality == "nan" or boom) and nodes:
            raise VectorError("vector.nodes must be {} in a vector whose equality is \"nan\" "
                              "or in which the value \"boom\" occurs")
    else:
        sources = set()
        for name in sorted(nodes):
            _validate_fuser_node(nodes[name], "nodes." + name, nodes, sources)
        _validate_fuser_node(vector["root"], "root", nodes, sources)
        _check_acyclic(nodes)
        declared = vector["sources"]
        if not isinstance(declared, list) or len(set(declared)) != len(declared):
            raise VectorError("vector.sources must be an array of distinct names")
        for s in declared:
            _expect_label(s, "vector.sources")
        connected = set()
        labels = set(step["connect"] for step in vector["steps"]
                     if isinstance(step, dict) and "connect" in step)
        for i, step in enumerate(vector["steps"]):
            where = "steps[%d]" % i
            if not isinstance(step, dict):
                raise VectorError("%s: expected an object" % where)
            if "connect" in step:
                _expect_keys(step, ("connect", "expect"), ("comment",), where)
                _expect_effect_label(step["connect"], where + ".connect")
                if step["connect"] in connected:
                    raise VectorError("%s: label %r connected twice" % (where, step["connect"]))
                connected.add(step["connect"])
            elif "dispose" in step:
                _expect_keys(step, ("dispose", "expect"), ("comment",), where)
                if step["dispose"] not in connected:
                    raise VectorError("%s: dispose of %r before its connect" % (where, step["dispose"]))
            elif "emit" in step:
                _expect_keys(step, ("emit", "value", "expect"), ("fail", "comment"), where)
                _expect_label(step["emit"], where + ".emit")
                sources.add(step["emit"])
                check_value(step["value"], where + ".value")
                _validate_fail(step, where, labels)
            else:
                raise VectorError("%s: a fuser step has connect, dispose or emit" % where)
            _validate_expect(step["expect"], where + ".expect", set(step.get("fail", [])))
        if set(declared) != sources:
            raise VectorError("vector.sources must list exactly the sources used: %s"
                              % sorted(sources))
    for i, step in enumerate(vector["steps"]):
        if "comment" in step and not isinstance(step["comment"], str):
            raise VectorError("steps[%d].comment must be a string" % i)


# ---------------------------------------------------------------------------------------
# Diffuser model


class _Context(object):
    """One step of a diffuser vector: its fail list, its log and the vector's equality."""

    def __init__(self, fail, equality="json"):
        self.fail = set(fail)
        self.log = []
        self.equality = equality

    def user_call(self, label, logged):
        """A labelled transform or predicate is called: it fails if its label is listed,
        otherwise it appends [label, logged]."""
        if label in self.fail:
            raise EffectFailure(label)
        self.log.append([label, copy.deepcopy(logged)])

    def equal(self, old, new):
        """An equality gate calls the vector's equality as eq(old = cache, new = v); the
        call fails when v is exactly the string "boom"."""
        if isinstance(new, str) and new == BOOM:
            raise EffectFailure(EQUALITY_ERROR)
        return vector_equal(self.equality, old, new)


class _EffectNode(object):
    def __init__(self, label):
        self.label = label

    def run(self, value, ctx):
        if self.label in ctx.fail:
            raise EffectFailure(self.label)
        ctx.log.append([self.label, copy.deepcopy(value)])


class _FanOutNode(object):
    def __init__(self, children):
        self.children = children

    def run(self, value, ctx):
        for child in self.children:
            child.run(value, ctx)


class _WhenNode(object):
    """intoWhen(pred, child); into, intoOnce and intoAll are instances of it.

    An equality gate (into, intoAll) decides with the vector's equality, which fails on
    "boom"; any other gate with its predicate, which is a logged user call when labelled."""

    def __init__(self, pred, child, equality_gate=False, label=None):
        self.pred = pred
        self.child = child
        self.equality_gate = equality_gate
        self.label = label
        self.has_cache = False
        self.cache = None

    def decide(self, old, new, ctx):
        if self.equality_gate:
            return not ctx.equal(old, new)
        if self.label is not None:
            ctx.user_call(self.label, [old, new])
        return predicate(self.pred, old, new, ctx.equality)

    def run(self, value, ctx):
        # An EffectFailure (in decide or in the child) leaves the cache untouched.
        if not self.has_cache or self.decide(self.cache, value, ctx):
            self.child.run(value, ctx)
        self.cache = copy.deepcopy(value)  # also when the value was equal: the new one is kept
        self.has_cache = True


class _MapNode(object):
    """map and invert; a labelled map's transform is a user call logging its input."""

    def __init__(self, fn, child, label=None):
        self.fn = fn
        self.child = child
        self.label = label

    def run(self, value, ctx):
        if self.label is not None:
            ctx.user_call(self.label, value)
        self.child.run(self.fn(value), ctx)


class _Builder(object):
    """Builds node descriptions; every named node is built once (one cache)."""

    def __init__(self, named, build_one):
        self.named = named
        self.build_one = build_one
        self.built = {}

    def build(self, desc):
        if desc["op"] == "ref":
            name = desc["ref"]
            if name not in self.built:
                self.built[name] = self.build(self.named[name])
            return self.built[name]
        return self.build_one(self, desc)


def _build_diffuser(builder, desc):
    op = desc["op"]
    if op == "intoAlways":
        if "effect" in desc:
            return _EffectNode(desc["effect"])
        return _FanOutNode([builder.build(c) for c in desc["children"]])
    if op == "intoWhen":
        if "effect" in desc:
            child = _EffectNode(desc["effect"])
        else:
            child = builder.build(desc["child"])
        return _WhenNode(desc["predicate"], child, label=desc.get("label"))
    if op == "into":
        return _WhenNode("changed", _EffectNode(desc["effect"]), equality_gate=True)
    if op == "intoOnce":
        return _WhenNode("never", _EffectNode(desc["effect"]))
    if op == "intoAll":
        return _WhenNode("changed", _FanOutNode([builder.build(c) for c in desc["children"]]),
                         equality_gate=True)
    if op == "map":
        selector = desc["selector"]
        return _MapNode(lambda v: apply_selector(selector, v), builder.build(desc["child"]),
                        desc.get("label"))
    if op == "invert":
        return _MapNode(logical_not, builder.build(desc["child"]))
    raise VectorError("unknown diffuser op %r" % (op,))


class DiffuserModel(object):
    """A built diffuser vector; step() performs one step and returns its result."""

    def __init__(self, vector):
        self.root = _Builder(vector["nodes"], _build_diffuser).build(vector["root"])
        self.equality = vector.get("equality", "json")

    def step(self, step):
        ctx = _Context(step.get("fail", []), self.equality)
        error = None
        try:
            self.root.run(copy.deepcopy(step["run"]), ctx)
        except EffectFailure as failure:
            error = failure.label
        return {"log": ctx.log, "error": error}


def run_diffuser(vector):
    model = DiffuserModel(vector)
    return [model.step(step) for step in vector["steps"]]


# ---------------------------------------------------------------------------------------
# Fuser model


class _SourceConnection(object):
    def __init__(self, source, sink):
        self.source = source
        self.sink = sink


class FuserModel(object):
    """A fuser vector's world: its sources and connections; step() performs one step."""

    def __init__(self, vector):
        self.nodes = vector["nodes"]
        self.root = vector["root"]
        self.sources = {}      # source name -> active _SourceConnection list, in connect order
        self.connections = {}  # connection label -> {"parts": [...], "disposed": bool}
        self.log = None
        self.fail = set()

    def connect_node(self, desc, sink):
        """Connects the description to sink; returns the source connections made, in order."""
        op = desc["op"]
        if op == "ref":
            return self.connect_node(self.nodes[desc["ref"]], sink)
        if op == "from":
            part = _SourceConnection(desc["source"], sink)
            self.sources.setdefault(desc["source"], []).append(part)
            self.log.append(["connect", desc["source"]])
            return [part]
        if op == "fromAll":
            parts = []
            for child in desc["children"]:
                parts.extend(self.connect_node(child, sink))
            return parts
        if op == "extract":
            transform = desc["transform"]
            return self.connect_node(desc["child"], lambda v: sink(apply_transform(transform, v)))
        if op == "extractConstant":
            constant = desc["constant"]
            return self.connect_node(desc["child"], lambda v: sink(copy.deepcopy(constant)))
        if op == "extractUnlessNull":
            transform = desc["transform"]

            def unless_null(v):
                t = apply_transform(transform, v)
                if t is not None:
                    sink(t)
            return self.connect_node(desc["child"], unless_null)
        raise VectorError("unknown fuser op %r" % (op,))

    def effect(self, label):
        def run(value):
            if label in self.fail:
                raise EffectFailure(label)
            self.log.append([label, copy.deepcopy(value)])
        return run

    def step(self, step):
        root = self.root
        self.log = []
        self.fail = set(step.get("fail", []))
        error = None
        if "connect" in step:
            label = step["connect"]
            parts = self.connect_node(root, self.effect(label))
            self.connections[label] = {"parts": parts, "disposed": False}
        elif "dispose" in step:
            conn = self.connections[step["dispose"]]
            if not conn["disposed"]:
                conn["disposed"] = True
                for part in conn["parts"]:
                    self.sources[part.source].remove(part)
                    self.log.append(["dispose", part.source])
        else:
            try:
                for part in list(self.sources.get(step["emit"], [])):
                    part.sink(copy.deepcopy(step["value"]))
            except EffectFailure as failure:
                error = failure.label
        return {"log": self.log, "error": error}


def run_fuser(vector):
    model = FuserModel(vector)
    return [model.step(step) for step in vector["steps"]]


# ---------------------------------------------------------------------------------------
# Running and checking


def run_vector(vector):
    """Executes the vector's steps on the model; returns one {"log", "error"} per step."""
    if vector["kind"] == "diffuser":
        return run_diffuser(vector)
    return run_fuser(vector)


def check_vector(vector):
    """Validates the vector and compares its expectations with the model.
    Returns a list of human-readable problems (empty if the vector passes)."""
    try:
        validate_vector(vector)
    except VectorError as e:
        return ["malformed: %s" % e]
    problems = []
    for i, (step, actual) in enumerate(zip(vector["steps"], run_vector(vector))):
        expect = step["expect"]
        if not json_equal(expect["log"], actual["log"]):
            problems.append("step %d: log expected %s, model gives %s"
                            % (i, _short(expect["log"]), _short(actual["log"])))
        if expect["error"] != actual["error"]:
            problems.append("step %d: error expected %r, model gives %r"
                            % (i, expect["error"], actual["error"]))
    return problems


def _short(value):
    import json
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
