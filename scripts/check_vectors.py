#!/usr/bin/env python3
"""Checks every conformance vector against the Python model.

    python3 scripts/check_vectors.py            # every *.json under conformance/
    python3 scripts/check_vectors.py FILE...    # only these files
    python3 scripts/check_vectors.py -v         # also list each vector

Each vector is validated (format of conformance/README.md: unknown keys, bad labels,
floats, unknown refs, ... are errors), executed on scripts/conformance_model.py, and its
expected logs and errors (for a list vector: its expected diff, batches and script)
compared with the model's. Names must be unique and equal to the
file name. Prints "N passed, M failed"; exits 1 if anything failed.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance_model as model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFORMANCE = os.path.join(ROOT, "conformance")


def find_vectors(top):
    found = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for filename in sorted(filenames):
            if filename.endswith(".json"):
                found.append(os.path.join(dirpath, filename))
    return found


def reject_floats(text):
    raise model.VectorError("floats are not allowed: %s" % text)


def reject_constant(text):
    raise model.VectorError("not JSON: %s" % text)


def reject_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise model.VectorError("duplicate key %r" % key)
        obj[key] = value
    return obj


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8")
    return json.loads(text, parse_float=reject_floats, parse_constant=reject_constant,
                      object_pairs_hook=reject_duplicates)


def main(argv):
    verbose = "-v" in argv
    paths = [a for a in argv if a != "-v"] or find_vectors(CONFORMANCE)
    passed = failed = 0
    names = {}
    kinds = {"diffuser": 0, "fuser": 0, "list": 0, "loop": 0}
    for path in paths:
        rel = os.path.relpath(path, ROOT)
        try:
            vector = load(path)
            problems = model.check_vector(vector)
        except (ValueError, model.VectorError) as e:
            vector, problems = None, ["unreadable: %s" % e]
        if vector is not None and not problems:
            name = vector["name"]
            if os.path.basename(path) != name + ".json":
                problems.append("name %r does not match the file name" % name)
            if name in names:
                problems.append("name %r also used by %s" % (name, names[name]))
            names[name] = rel
        if problems:
            failed += 1
            print("FAIL %s" % rel)
            for p in problems:
                print("  " + p)
        else:
            passed += 1
            kinds[vector["kind"]] += 1
            if verbose:
                print("ok   %s" % rel)
    print("%d passed, %d failed (%d diffuser, %d fuser, %d list, %d loop)"
          % (passed, failed, kinds["diffuser"], kinds["fuser"], kinds["list"], kinds["loop"]))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
