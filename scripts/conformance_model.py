#!/usr/bin/env python3
"""Executable model of Diffuser and Fuser semantics for the conformance vectors.

This module is independent of the library: it restates the semantics described in
conformance/README.md in a few hundred lines of plain Python, so that expected logs can be
computed (scripts/gen_vectors.py) and every vector in the corpus can be checked
(scripts/check_vectors.py).

Public entry points:

    validate_vector(vector)        raises VectorError if the vector is malformed
    run_vector(vector)             -> list of {"log": [...], "error": None|label}, one per step
                                      (for a list vector: its one expectation, see list_expect)
    check_vector(vector)           -> list of mismatch messages (empty when the vector passes)
    json_equal(a, b)               deep JSON equality (bool is never equal to an integer)
    vector_equal(equality, a, b)   a diffuser vector's equality: "json", "near" or "nan"
    list_diff(old_keys, new_keys, same_content)   the keyed list diff, slowly (README 10)
    list_expect(old, new)          a list vector's "expect": diff, both batches, script

Loop vectors (README section 11) are validated and run by loop_model.py (validate_loop_vector,
run_loop_vector); check_vector compares every key of each step's "expect" with it.

Values are the Python objects produced by json.loads: None, bool, int, str, list, dict.
Floats are not allowed anywhere in a vector.

One module because the diffuser, fuser and list models share the JSON value rules and
the validation helpers at the top, and the entry points above dispatch over them by
kind, so gen_vectors.py and check_vectors.py import one model; the loop model, which
shares none of it, is loop_model.py.
"""

import copy
import re

import loop_model

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


def fail_entry(entry):
    """A "fail" entry as (label, k): "L" fails every call of L in the step (k None),
    "L@k" only its k-th call (README 3.3)."""
    if isinstance(entry, str) and "@" in entry:
        label, _, k = entry.partition("@")
        if k.isascii() and k.isdigit() and not k.startswith("0"):
            return label, int(k)
        return entry, None
    return entry, None


def _validate_fail(step, where, known, counted=True):
    fail = step.get("fail", [])
    if not isinstance(fail, list):
        raise VectorError("%s.fail: expected an array" % where)
    for entry in fail:
        label, k = fail_entry(entry)
        if k is not None and not counted:
            raise VectorError("%s.fail: %r: a fuser step's fail lists labels only" % (where, entry))
        _expect_effect_label(label, where + ".fail")
        if label not in known:
            raise VectorError("%s.fail: label %r does not occur in the vector" % (where, label))


def _fail_labels(step):
    return set(fail_entry(entry)[0] for entry in step.get("fail", []))


def validate_vector(vector):
    """Raises VectorError if the vector does not follow conformance/README.md."""
    if not isinstance(vector, dict):
        raise VectorError("a vector is a JSON object")
    kind = vector.get("kind")
    if kind == "list":
        validate_list_vector(vector)
    elif kind == "loop":
        try:
            loop_model.validate_loop_vector(vector)
        except loop_model.LoopVectorError as e:
            raise VectorError(str(e))
    elif kind == "diffuser":
        _expect_keys(vector, ("format", "name", "kind", "description", "nodes", "root", "steps"),
                     ("equality",), "vector")
    elif kind == "fuser":
        _expect_keys(vector, ("format", "name", "kind", "description", "sources", "nodes",
                              "root", "steps"), (), "vector")
    else:
        raise VectorError("vector.kind must be \"diffuser\", \"fuser\", \"list\" or \"loop\"")
    if vector["format"] != FORMAT or json_type(vector["format"]) != "int":
        raise VectorError("vector.format must be %d" % FORMAT)
    if not isinstance(vector["name"], str) or not re.match(r"^[a-z0-9][a-z0-9-]*$", vector["name"]):
        raise VectorError("vector.name must match [a-z0-9][a-z0-9-]*")
    if not isinstance(vector["description"], str):
        raise VectorError("vector.description must be a string")
    if kind in ("list", "loop"):
        return
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
            _validate_expect(step["expect"], where + ".expect", _fail_labels(step) | set([EQUALITY_ERROR]))
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
                _validate_fail(step, where, labels, counted=False)
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
        self.calls = {}
        self.log = []
        self.equality = equality

    def fails(self, label):
        """A labelled call is made: whether it fails (its label listed, or "label@k" for
        this, its k-th call in the step)."""
        self.calls[label] = self.calls.get(label, 0) + 1
        return label in self.fail or "%s@%d" % (label, self.calls[label]) in self.fail

    def user_call(self, label, logged):
        """A labelled transform or predicate is called: it fails if listed (fails),
        otherwise it appends [label, logged]."""
        if self.fails(label):
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
        if ctx.fails(self.label):
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
# List vectors (README section 10): the keyed list diff, restated slowly.
#
# Nothing here is clever: every part is computed from its definition, in O(n^2) or worse,
# so that it can be read against the README and serve as the reference for the fast
# implementations.

LIST_EXPECT_KEYS = ("deletes", "inserts", "moves", "updates", "oldToNew", "newToOld",
                    "hasDuplicates", "batch", "batchMoveThenReload", "script")
LIST_BATCH_KEYS = ("deletes", "inserts", "moves", "reloads", "reloadsAfterMoves")
LIST_STEP_KINDS = ("remove", "move", "insert", "change")
LIST_KEY_MAX_LENGTH = 16


def list_key_equal(a, b):
    """Keys are integers or strings; 1 and "1" are different keys."""
    return json_equal(a, b)


def list_lis(values):
    """The longest increasing subsequence that the list diff keeps in place (README 10.3):
    indices into `values` (distinct integers), ascending.

    level[t] is the length of the longest strictly increasing subsequence of `values` that
    ends at t. The chosen subsequence ends at the LAST t whose level is the maximum; each
    element's predecessor is the LAST earlier element whose level is one less and whose
    value is smaller. (This is the subsequence that patience sorting with a
    predecessor link to the current top of the previous pile finds.)"""
    k = len(values)
    level = [1] * k
    for t in range(k):
        for u in range(t):
            if values[u] < values[t] and level[u] + 1 > level[t]:
                level[t] = level[u] + 1
    if k == 0:
        return []
    best = max(level)
    t = max(u for u in range(k) if level[u] == best)
    chosen = [t]
    while level[t] > 1:
        t = max(u for u in range(t) if level[u] == level[t] - 1 and values[u] < values[t])
        chosen.append(t)
    return sorted(chosen)


def list_diff(old_keys, new_keys, same_content):
    """The diff of README 10.2-10.3: a dict with deletes, inserts, moves, updates (pairs as
    [old, new]), oldToNew, newToOld and hasDuplicates. same_content(i, j) compares the
    contents of matched old item i and new item j."""
    n, m = len(old_keys), len(new_keys)
    o2n = [-1] * n
    n2o = [-1] * m
    limit = min(n, m)
    # 1. The common prefix and suffix pair in place.
    p = 0
    while p < limit and list_key_equal(old_keys[p], new_keys[p]):
        o2n[p] = n2o[p] = p
        p += 1
    s = 0
    while s < limit - p and list_key_equal(old_keys[n - 1 - s], new_keys[m - 1 - s]):
        o2n[n - 1 - s] = m - 1 - s
        n2o[m - 1 - s] = n - 1 - s
        s += 1
    old_mid = list(range(p, n - s))
    new_mid = list(range(p, m - s))
    # 2. In the middle, the k-th old occurrence of a key pairs with its k-th new one.
    for j in new_mid:
        k = sum(1 for jj in new_mid if jj < j and list_key_equal(new_keys[jj], new_keys[j]))
        olds = [i for i in old_mid if list_key_equal(old_keys[i], new_keys[j])]
        if k < len(olds):
            o2n[olds[k]] = j
            n2o[j] = olds[k]
    # Duplicates: a key twice in the old middle or twice in the new middle, looked for only
    # when both middles are non-empty (only then are keys paired by occurrence).
    def repeats(keys, indices):
        return any(list_key_equal(keys[a], keys[b]) for a in indices for b in indices if a < b)
    duplicates = bool(old_mid) and bool(new_mid) and (
        repeats(old_keys, old_mid) or repeats(new_keys, new_mid))
    # 3. Matched items in new order; those outside the chosen LIS of their old indices move.
    matched_new = [j for j in range(m) if n2o[j] >= 0]
    stays = set(matched_new[t] for t in list_lis([n2o[j] for j in matched_new]))
    return {
        "deletes": [i for i in range(n) if o2n[i] < 0],
        "inserts": [j for j in range(m) if n2o[j] < 0],
        "moves": [[n2o[j], j] for j in matched_new if j not in stays],
        "updates": [[n2o[j], j] for j in matched_new if not same_content(n2o[j], j)],
        "oldToNew": o2n,
        "newToOld": n2o,
        "hasDuplicates": duplicates,
    }


def list_batch(diff, move_then_reload):
    """The UIKit batch of README 10.4."""
    moved = set(j for _, j in diff["moves"])
    changed = set(j for _, j in diff["updates"])
    both = moved & changed
    reloads = sorted(i for i, j in diff["updates"] if j not in moved)
    if move_then_reload:
        return {"deletes": list(diff["deletes"]), "inserts": list(diff["inserts"]),
                "moves": [list(pair) for pair in diff["moves"]], "reloads": reloads,
                "reloadsAfterMoves": sorted(both)}
    return {"deletes": sorted(diff["deletes"] + [i for i, j in diff["moves"] if j in both]),
            "inserts": sorted(diff["inserts"] + sorted(both)),
            "moves": [list(pair) for pair in diff["moves"] if pair[1] not in both],
            "reloads": reloads, "reloadsAfterMoves": []}


def _runs(indices):
    """Ascending indices as runs [start, count] of consecutive indices, ascending."""
    runs = []
    for x in indices:
        if runs and runs[-1][0] + runs[-1][1] == x:
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    return runs


def list_script(diff):
    """The step-by-step script of README 10.5, by simulating the list it acts on."""
    steps = []
    for at, count in reversed(_runs(diff["deletes"])):
        steps.append(["remove", at, count])
    # After the removes: the matched items (named by their old index), in old order.
    current = [i for i in range(len(diff["oldToNew"])) if diff["oldToNew"][i] >= 0]
    o2n = diff["oldToNew"]
    placed = set(i for i in current) - set(i for i, _ in diff["moves"])
    for old, new in diff["moves"]:
        source = current.index(old)
        current.pop(source)
        before = [i for i in placed if o2n[i] < new]
        target = current.index(max(before, key=lambda i: o2n[i])) + 1 if before else 0
        current.insert(target, old)
        placed.add(old)
        if source != target:
            steps.append(["move", source, target])
    for at, count in _runs(diff["inserts"]):
        steps.append(["insert", at, count])
    for at, count in _runs([j for _, j in diff["updates"]]):
        steps.append(["change", at, count])
    return steps


def list_expect(old, new):
    """A list vector's complete "expect" for the lists `old` and `new` ([key, content]
    items; contents compared by JSON equality)."""
    diff = list_diff([item[0] for item in old], [item[0] for item in new],
                     lambda i, j: json_equal(old[i][1], new[j][1]))
    expect = dict(diff)
    expect["batch"] = list_batch(diff, False)
    expect["batchMoveThenReload"] = list_batch(diff, True)
    expect["script"] = list_script(diff)
    return expect


def _validate_list_items(items, where):
    if not isinstance(items, list):
        raise VectorError("%s must be an array of [key, content] items" % where)
    for i, item in enumerate(items):
        w = "%s[%d]" % (where, i)
        if not isinstance(item, list) or len(item) != 2:
            raise VectorError("%s: an item is [key, content]" % w)
        key = item[0]
        check_value(key, w + ".key")
        t = json_type(key)
        if t == "string":
            if len(key) > LIST_KEY_MAX_LENGTH:
                raise VectorError("%s: key strings have at most %d characters"
                                  % (w, LIST_KEY_MAX_LENGTH))
        elif t != "int":
            raise VectorError("%s: a key is an integer or a string" % w)
        check_value(item[1], w + ".content")


def _validate_int_array(value, where, pairs=False):
    if not isinstance(value, list):
        raise VectorError("%s must be an array" % where)
    for i, x in enumerate(value):
        if pairs:
            if not isinstance(x, list) or len(x) != 2 or not all(is_int(y) for y in x):
                raise VectorError("%s[%d] must be a pair [old, new] of integers" % (where, i))
        elif not is_int(x):
            raise VectorError("%s[%d] must be an integer" % (where, i))


def validate_list_vector(vector):
    """Raises VectorError unless the list vector has the shape of README 10.1."""
    _expect_keys(vector, ("format", "name", "kind", "description", "old", "new", "expect"), (),
                 "vector")
    _validate_list_items(vector["old"], "vector.old")
    _validate_list_items(vector["new"], "vector.new")
    expect = vector["expect"]
    _expect_keys(expect, LIST_EXPECT_KEYS, (), "expect")
    for key in ("deletes", "inserts", "oldToNew", "newToOld"):
        _validate_int_array(expect[key], "expect." + key)
    for key in ("moves", "updates"):
        _validate_int_array(expect[key], "expect." + key, pairs=True)
    if json_type(expect["hasDuplicates"]) != "bool":
        raise VectorError("expect.hasDuplicates must be a boolean")
    for name in ("batch", "batchMoveThenReload"):
        batch = expect[name]
        _expect_keys(batch, LIST_BATCH_KEYS, (), "expect." + name)
        for key in LIST_BATCH_KEYS:
            _validate_int_array(batch[key], "expect.%s.%s" % (name, key), pairs=(key == "moves"))
    if not isinstance(expect["script"], list):
        raise VectorError("expect.script must be an array")
    for i, step in enumerate(expect["script"]):
        if (not isinstance(step, list) or len(step) != 3 or step[0] not in LIST_STEP_KINDS
                or not is_int(step[1]) or not is_int(step[2])):
            raise VectorError("expect.script[%d] must be [kind, a, b] with kind one of %s"
                              % (i, ", ".join(LIST_STEP_KINDS)))


def check_list_vector(vector):
    """The mismatches between a (valid) list vector's expect and the model's."""
    actual = list_expect(vector["old"], vector["new"])
    problems = []
    for key in LIST_EXPECT_KEYS:
        if not json_equal(vector["expect"][key], actual[key]):
            problems.append("expect.%s is %s, model gives %s"
                            % (key, _short(vector["expect"][key]), _short(actual[key])))
    return problems


# ---------------------------------------------------------------------------------------
# Running and checking


def run_vector(vector):
    """Executes the vector's steps on the model; returns one {"log", "error"} per step.
    For a list vector: the list of its one expectation (list_expect)."""
    if vector["kind"] == "list":
        return [list_expect(vector["old"], vector["new"])]
    if vector["kind"] == "loop":
        return loop_model.run_loop_vector(vector)
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
    if vector["kind"] == "list":
        return check_list_vector(vector)
    if vector["kind"] == "loop":
        return check_loop_vector(vector)
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


def check_loop_vector(vector):
    """Compares every key of each step's "expect" with the loop model (README 11)."""
    try:
        actual = loop_model.run_loop_vector(vector)
    except loop_model.LoopVectorError as e:
        return ["malformed: %s" % e]
    problems = []
    for i, (step, got) in enumerate(zip(vector["steps"], actual)):
        for key in sorted(step["expect"]):
            if not json_equal(step["expect"][key], got[key]):
                problems.append("step %d: %s expected %s, model gives %s"
                                % (i, key, _short(step["expect"][key]), _short(got[key])))
    return problems


def _short(value):
    import json
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
