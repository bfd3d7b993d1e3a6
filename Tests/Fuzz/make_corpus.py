#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_api (Tests/Fuzz/corpus/): small programs, in the
encoding fuzz_api.c reads, that reach deep sequences the fuzzer then mutates.

    python3 Tests/Fuzz/make_corpus.py            # rewrites Tests/Fuzz/corpus/seed_*
    FUZZ_API_TRACE=1 build-fuzz/fuzz_api Tests/Fuzz/corpus/seed_reentrant   # see one run

The encoding (keep in step with fuzz_api.c):
  op byte (enum op), then operands in the order each op_* function reads them;
  a handle pick byte: 0-31 the n-th valid record (modulo their count), 0xA0+i any
  record i (valid or not), 0xC0 NULL, 0xE0 then one byte: forged;
  a callback (make_cb): flags (bits 0-2: 5 fail on odd calls, 6 fail on value key 3,
  7 always; bit 3 dfs_set_error; bits 4-5 both set: no destroy; bits 6-7 variant) and
  an action byte (>= 0xC0: a program of (a & 15) + 1 bytes follows; 0xA0-0xA2 and a
  byte: the context holds a type, diffuser or fuser until its destroy);
  a value byte: bits 0-2 the key, 0xF0-0xFF NULL, bit 3 a fresh box (types that retain).

One file because the assembler (one function per operation, reading its operands in
the order the op_* function does) and the seeds written with it belong together: a
seed reads next to the encoding it spells, and the whole encoding can be checked
against fuzz_api.c, fuzz_list.c and fuzz_loop.c in one place.
"""
import os
import sys

OPS = ["TYPE_NEW", "TYPE_RETAIN", "TYPE_RELEASE", "INTO", "INTO_WHEN", "INTO_WHEN_EFFECT",
       "INTO_ALL", "MAP", "MAP_FIELD", "INVERT", "RUN", "DIFFUSER_HANDLE", "FUSER_FROM",
       "FUSER_FROM_ALL", "FUSER_EXTRACT", "CONNECT", "EMIT", "DISPOSE", "DISPOSABLE_RELEASE",
       "FUSER_HANDLE", "CLOSURE_NEW", "CLOSURE_CALL", "MISC", "SELF", "RUN2", "EMIT2",
       "LIST_DIFF", "LIST_SECTIONS", "INTO_LIST", "LOOP_NEW", "LOOP_DISPATCH", "LOOP_READ",
       "LOOP_OBSERVE", "LOOP_ATTACH", "LOOP_FEEDBACK", "LOOP_LIFE", "JOB", "EXECUTOR", "GEAR",
       "JOURNAL", "LOOP_SELF", "LOOP_DISPATCH2", "FEEDBACK"]
OP = {name: i for i, name in enumerate(OPS)}

# Builtin types are type records 0 (pointer), 1 (cstring), 2 (ffi_event); user types
# follow from 3. A pick of a valid record counts only valid ones: while no type was
# released, type record i is pick i.
POINTER, CSTRING, FFI = 0, 1, 2
NULL = 0xC0


def any_record(i):
    return 0xA0 + i


def forged(b):
    return [0xE0, b]


def cb(flags=0, action=None, own=None):
    """A callback: flags, then an optional program run when it is called, or a handle
    it holds until its destroy: own=(kind, n) with kind 0 type, 1 diffuser, 2 fuser and
    n the n-th record of that kind with references."""
    if own is not None:
        return [flags, 0xA0 + own[0], own[1]]
    if not action:
        return [flags, 0]
    assert 1 <= len(action) <= 16
    return [flags, 0xC0 + len(action) - 1] + action


def type_new(mode=0, equal=True, fail_equal=False, fail_retain=False, ctx=None):
    """mode 0: reference counts, 1: copies, 2: borrowed, 3: release only."""
    f = mode | (0 if equal else 4) | (8 if fail_equal else 0) | (16 if fail_retain else 0)
    return [OP["TYPE_NEW"], f] + (ctx or cb())


def into(variant, type_pick, effect=None, null_fn=False):
    """variant 0 into, 1 into_always, 2 into_once."""
    return [OP["INTO"], variant | (0x1C if null_fn else 0), type_pick] + (effect or cb())


def into_when(child, change=None):
    return [OP["INTO_WHEN"], 0, child] + (change or cb())


def into_when_effect(type_pick, change=None, effect=None):
    return [OP["INTO_WHEN_EFFECT"], 0, type_pick] + (change or cb()) + (effect or cb())


def into_all(type_pick, children, always=False, list_mode=0):
    """list_mode 5: NULL list; 6: a count out of range."""
    assert len(children) <= 4
    return [OP["INTO_ALL"], 1 if always else 0, type_pick, len(children) | (list_mode << 5)] + children


def map_(type_pick, child, transform=None, borrowed=False):
    return [OP["MAP"], 1 if borrowed else 0, type_pick, child] + (transform or cb())


def map_field(type_pick, child, offset_index=1, size_index=2):
    """offsets: magic, value, refs, 0, 8, 12, 1, 3; sizes 1, 2, 4, 8."""
    return [OP["MAP_FIELD"], offset_index | (size_index << 3), type_pick, child]


def invert(child):
    return [OP["INVERT"], 0, child]


def run(diffuser, value):
    return [OP["RUN"], diffuser, value]


def diffuser_retain(d):
    return [OP["DIFFUSER_HANDLE"], 0, d]


def diffuser_release(d):
    return [OP["DIFFUSER_HANDLE"], 1, d]


def diffuser_type(d):
    return [OP["DIFFUSER_HANDLE"], 2, d]


def type_retain(t):
    return [OP["TYPE_RETAIN"], t]


def type_release(t):
    return [OP["TYPE_RELEASE"], t]


def fuser_from(type_pick, source=None, disconnect=True, refuse=0, emit_in_disconnect=False):
    """refuse 1: always; 2: every second connect."""
    f = (0 if disconnect else 0x18) | ({0: 0, 1: 0x20, 2: 0x40}[refuse]) | (0x80 if emit_in_disconnect else 0)
    return [OP["FUSER_FROM"], f, type_pick] + (source or cb())


def fuser_from_all(type_pick, children, list_mode=0):
    return [OP["FUSER_FROM_ALL"], 0, type_pick, len(children) | (list_mode << 5)] + children


def extract(type_pick, child, transform=None, unless_null=False):
    return [OP["FUSER_EXTRACT"], 1 if unless_null else 0, type_pick, child] + (transform or cb())


def extract_constant(type_pick, child, value):
    return [OP["FUSER_EXTRACT"], 2, type_pick, child, value]


def connect(fuser, effect=None):
    return [OP["CONNECT"], 0, fuser] + (effect or cb())


def emit(dispatch, value):
    return [OP["EMIT"], dispatch, value]


def dispose(x):
    return [OP["DISPOSE"], x]


def disposable_release(x):
    return [OP["DISPOSABLE_RELEASE"], x]


def fuser_release(f):
    return [OP["FUSER_HANDLE"], 1, f]


def closure_new(dispatch, signature, bad=0):
    """signatures: 0 void(), 1 int(int32), 2 void(int32, double, char*),
    3 int(int8, uint16, int64, float), 4 int(char*), 5 void(11 arguments).
    bad 5: return double; 6: bad argument; 7: a void argument."""
    return [OP["CLOSURE_NEW"], signature, bad << 5, dispatch]


def closure_call(index, arg):
    return [OP["CLOSURE_CALL"], index, arg]


def self_run(value):
    return [OP["SELF"], 1, value]


def self_release():
    return [OP["SELF"], 0]


def self_dispose():
    return [OP["SELF"], 1]


def self_dispose_release():
    return [OP["SELF"], 0]


def misc(f, extra=0):
    """0 last_error, 1 set_error(NULL), 2 set_error, 3 status_name(extra), 4 versions,
    5 type of NULL."""
    return [OP["MISC"], f] + ([extra] if f % 6 == 3 else [])


def list_diff(f, g, m, old=None, new=None, seed=0):
    """f: bits 0-2 dfs_list_flags, bit 3 an unknown flag, bits 4-5 content (0 none,
    1 fingerprints, 2 callback, 3 fingerprints of one list), bits 6-7 both: misuse m >> 5;
    g: bits 0-2 alphabet - 1, bit 7 generated from `seed`; m: the callback fails at call
    m & 15, bit 4 a diff inside it. Items: key in the low bits, content in bit 7."""
    if g & 0x80:
        return [OP["LIST_DIFF"], f, g, m, seed]
    return [OP["LIST_DIFF"], f, g, m, len(old)] + old + [len(new)] + new


def list_sections(f, g, m, seed):
    """Generated sections (g bit 7) from `seed`, the new ones edited from the old ones."""
    return [OP["LIST_SECTIONS"], f, g | 0x80, m, seed]


def into_list(f, g, type_pick, reader=None, sink=None):
    """f: bits 0-2 flags, (f >> 4) % 3 content (none, fingerprints, same_content), bit 6
    hashed keys with same_key; g: the seed of the node's eight lists."""
    return [OP["INTO_LIST"], f, g, type_pick] + (reader or cb()) + (sink or cb())


# Loops (fuzz_loop.c). Loop, job, executor, gear and journal picks work like the others
# (n-th valid record; 0xA0 + i any record; NULL; forged). A callback's variant (flags
# bits 6-7): update 1 gives a model, 2 effects, 3 both; handler and feedback 1 send an
# event at once, 2 hold the job (retain it), 3 finish it; coalescing key 0 none.
INLINE = NULL  # a handler's or feedback's executor: none, run in the step
UPDATE_MODEL, UPDATE_EFFECTS, UPDATE_BOTH = 0x40, 0x80, 0xC0
SEND, HOLD, FINISH = 0x40, 0x80, 0xC0


def loop_new(types, update=None, handlers=(), key=None, inspect=None, manual_start=False, journal=None,
             executor=None, model=0, start_effects=(), misuse=0, feedbacks=(), feedbacks_misuse=0):
    """types: (model, event, effect) type picks; handlers: (callback, executor pick)
    pairs; key, inspect: callbacks; misuse 7 NULL config, 6 NULL update, 5 NULL
    handlers, 4 NULL start effects, 3 a handler count out of range; feedbacks: up to
    three feedback handle picks (among the handles of the loop's model and event types;
    a forged one is a list, see feedback_pick); feedbacks_misuse 1 a NULL array with a
    non-zero count, 2 a count out of range."""
    assert len(feedbacks) <= 3 and feedbacks_misuse in (0, 1, 2)
    f = ((1 if key else 0) | (2 if inspect else 0) | (4 if manual_start else 0) | (8 if journal is not None else 0)
         | (0x10 if executor is not None else 0) | (misuse << 5))
    g = len(handlers) | (len(start_effects) << 2) | (len(feedbacks) << 4) | (feedbacks_misuse << 6)
    out = [OP["LOOP_NEW"], f, g] + list(types) + (update or cb(UPDATE_BOTH))
    for handler, on in handlers:
        out += handler + [on]
    out += (key or []) + (inspect or [])
    out += ([executor] if executor is not None else []) + ([journal] if journal is not None else [])
    out += [model] + list(start_effects)
    for pick in feedbacks:
        out += pick if isinstance(pick, list) else [pick]
    return out


def loop_dispatch(loop, value):
    return [OP["LOOP_DISPATCH"], loop, value]


def loop_model(loop, fails=False):
    return [OP["LOOP_READ"], 0x20 if fails else 0, loop]


def loop_is_running(loop):
    return [OP["LOOP_READ"], 1, loop]


def stale_next(loop):
    return [OP["LOOP_READ"], 2, loop]


def observe(loop, observer=None):
    return [OP["LOOP_OBSERVE"], 0, loop] + (observer or cb())


def render(loop, diffuser):
    return [OP["LOOP_ATTACH"], 1, loop, diffuser]


def loop_connect(loop, fuser):
    return [OP["LOOP_ATTACH"], 0, loop, fuser]


def feedback(loop, executor=INLINE, fn=None, overlap=0, request=None):
    """overlap 0 cancel previous, 1 keep previous, 2 concurrent, 3 invalid; request:
    (request type pick, request callback)."""
    f = (1 if request else 0) | (overlap << 1)
    out = [OP["LOOP_FEEDBACK"], f, loop, executor] + ([request[0]] if request else []) + (fn or cb())
    return out + (request[1] if request else [])


def loop_start(loop):
    return [OP["LOOP_LIFE"], 0, loop]


def loop_stop(loop):
    return [OP["LOOP_LIFE"], 1, loop]


def loop_dispose(loop):
    return [OP["LOOP_LIFE"], 2, loop]


def loop_retain(loop):
    return [OP["LOOP_LIFE"], 3, loop]


def loop_release(loop):
    return [OP["LOOP_LIFE"], 4, loop]


def loop_record(loop, journal):
    return [OP["LOOP_LIFE"], 5, loop, journal]


def job_send(job, value):
    return [OP["JOB"], 0, job, value]


def job_finish(job):
    return [OP["JOB"], 1, job]


def job_cancel(job):
    return [OP["JOB"], 2, job]


def job_on_cancel(job, action=None):
    return [OP["JOB"], 3, job] + (action or cb())


def job_is_cancelled(job):
    return [OP["JOB"], 4, job]


def job_retain(job):
    return [OP["JOB"], 5, job]


def job_release(job):
    return [OP["JOB"], 6, job]


def manual_executor():
    return [OP["EXECUTOR"], 0]


def c_executor(execute=None, steps=0):
    """execute variant 1 (flags 0x40): runs each piece of work at once."""
    return [OP["EXECUTOR"], 1 | (steps << 3)] + (execute or cb())


def run_next(executor):
    return [OP["EXECUTOR"], 2, executor]


def run_all(executor):
    return [OP["EXECUTOR"], 3, executor]


def work_run(n=0, again=False):
    """The oldest pending work of the executor of the n-th pending one; again: one that
    ran (DFS_ERR_HANDLE)."""
    return [OP["EXECUTOR"], 4, 0x80 if again else n]


def executor_release(executor):
    return [OP["EXECUTOR"], 5, executor]


def gear_new(type_pick):
    return [OP["GEAR"], 0, type_pick]


def gear_send(gear, value):
    return [OP["GEAR"], 1, gear, value]


def push_to_gear(loop, gear, propagate=None):
    return [OP["GEAR"], 2, loop, gear] + (propagate or cb())


def attach_to_gear(loop, gear, propagate=None):
    return [OP["GEAR"], 3, loop, gear] + (propagate or cb())


def gear_release(gear):
    return [OP["GEAR"], 4 | 8, gear]


def journal_new(model_pick, event_pick):
    return [OP["JOURNAL"], 0, model_pick, event_pick]


def journal_entries(journal, fail_at=0):
    return [OP["JOURNAL"], 1 | (fail_at << 5), journal]


def journal_replay(journal, effect_pick, fail_at=0):
    return [OP["JOURNAL"], 2 | (fail_at << 5), journal, effect_pick]


def journal_clear(journal):
    return [OP["JOURNAL"], 3, journal]


def journal_release(journal):
    return [OP["JOURNAL"], 5 | 8, journal]


def loop_self(what, value=0):
    """From inside a loop callback: 0 dispatch (value), 1 stop, 2 dispose, 3 release,
    4 start its own loop."""
    return [OP["LOOP_SELF"], what] + ([value] if what == 0 else [])


# Feedback handles (OP_FEEDBACK). The types a handle serves: those of loop record i
# (types=i), or two type picks (types=(model, event)). A feedback pick counts only the
# handles serving the loop it goes with (all for retain and release).
def feedback_types(types):
    return [types] if isinstance(types, int) else [0x80] + list(types)


def feedback_work(types, executor=INLINE, fn=None, overlap=0, request=None, null_fn=False, null_out=False):
    """dfs_feedback_work, or with request=(request type pick, callback) dfs_feedback_request;
    overlap 3: invalid."""
    g = (1 if request else 0) | (overlap << 1) | (0x60 if null_fn else 0) | (0x98 if null_out else 0)
    out = [OP["FEEDBACK"], 0, g] + feedback_types(types) + (executor if isinstance(executor, list) else [executor])
    out += ([request[0]] if request else []) + (fn or cb())
    return out + (request[1] if request else [])


def feedback_gear(types, gear, propagate=None, attach=False, null_fn=False, null_out=False):
    """dfs_feedback_pushing, or dfs_feedback_attached."""
    g = (0x70 if null_fn else 0) | (0x0F if null_out else 0)
    return [OP["FEEDBACK"], 2 if attach else 1, g] + feedback_types(types) + [gear] + (propagate or cb())


def loop_add(loop, feedback, null_out=False):
    """loop, feedback: picks (a list for a forged one)."""
    return ([OP["FEEDBACK"], 0xFB if null_out else 3] + (loop if isinstance(loop, list) else [loop])
            + (feedback if isinstance(feedback, list) else [feedback]))


def feedback_retain(feedback):
    return [OP["FEEDBACK"], 6] + (feedback if isinstance(feedback, list) else [feedback])


def feedback_release(feedback):
    return [OP["FEEDBACK"], 7] + (feedback if isinstance(feedback, list) else [feedback])


def wrong_kind(kind=0):
    """A forged feedback pick: a live handle of another kind of the loop family (0 loop,
    1 gear, 2 executor, 3 journal; the next kind that has one)."""
    return forged(0x84 | (kind << 3))


LIVE_FEEDBACK = forged(0x84)  # a forged loop, gear, executor, journal or job pick: a live feedback handle

FRESH = 8  # value bit: a fresh box (released by the harness right after the call)
NULLV = 0xF0


SEEDS = {
    # An effect that runs its own diffuser from inside the run (queued), a failing
    # sibling, a shared child, releases while the graph lives, a type over-released
    # while diffusers use it.
    "reentrant": (
        type_new(0)
        + into(0, 3, cb(0, self_run(FRESH | 2)))             # d0: into, reruns itself
        + into(1, 3, cb(5))                                   # d1: into_always, fails on odd calls
        + into_all(3, [0, 1])                                 # d2: into_all(d0, d1)
        + map_(3, 2, cb(0x80))                                # d3: map over d2 (retains its input)
        + run(3, FRESH | 1) + run(3, FRESH | 1) + run(3, 2) + run(2, FRESH | 5)
        + type_release(3)                                     # the caller's last reference
        + type_release(3)                                     # over-release: DFS_ERR_HANDLE
        + diffuser_release(0)                                 # d0 lives on inside d2
        + run(2, FRESH | 3) + run(any_record(0), 1)           # the released handle is refused
        + diffuser_type(any_record(2)) + diffuser_release(any_record(1)) + run(any_record(1), FRESH | 4)
    ),
    # A closure emits into a connection whose effect disposes the connection, which
    # frees the closure while its call is still in the trampoline.
    "closure_self_dispose": (
        fuser_from(FFI)                                       # f0
        + connect(0, cb(0, self_dispose()))                   # x0, dispatch 0
        + closure_new(0, 2) + closure_new(0, 5) + closure_new(0, 3, bad=5)
        + closure_call(1, 7)
        + closure_call(0, 3)                                  # the effect disposes x0
        + emit(any_record(0), 1)                              # stale dispatch: DFS_ERR_HANDLE
        + dispose(0) + disposable_release(0) + dispose(any_record(0))
        + connect(0, cb(0, self_dispose_release()))           # x1, dispatch 1
        + closure_new(1, 4) + closure_call(0, 2) + closure_call(0, 2)
    ),
    # Field maps (in place, and on NULL: DFS_ERR_NULL), invert, into_when and
    # into_when_effect with predicates, bad sizes.
    "field_invert": (
        type_new(2)                                           # t3: borrowed boxes
        + into(0, POINTER, cb(6))                             # d0: pointer effect, fails on key 3
        + map_field(3, 0, 1, 2)                               # d1: value (int) of t3
        + invert(0)                                           # d2
        + into_when(2, cb(0x40))                              # d3 (predicate: always)
        + into_all(POINTER, [0, 3], always=True)              # d4
        + map_field(3, 4, 1, 3)                               # d5: 8 bytes of the value
        + map_field(3, 4, 2, 0)                               # d6: one byte of refs
        + into_when_effect(3, cb(0xC0), cb(0))                # d7
        + map_field(3, 7)                                     # not a pointer child: bad
        + run(1, 1) + run(1, 2) + run(1, NULLV) + run(5, 3) + run(6, 4) + run(7, 1) + run(7, 1)
        + invert(7)                                           # not a pointer type: DFS_ERR_TYPE
        + into_all(3, [0, 1])                                 # a child of another type: DFS_ERR_TYPE
        + into_all(3, [0], list_mode=6) + into_all(3, [0], list_mode=5)
    ),
    # NULL, forged, wrong-kind and stale handles everywhere.
    "bad_handles": (
        type_retain(NULL) + type_release(NULL) + type_retain(0xE0) + [0]
        + run(NULL, 0) + [OP["RUN"]] + forged(1) + [0] + [OP["RUN"]] + forged(4) + [0]
        + type_new(0) + into(0, 3)                            # t3, d0
        + fuser_from(3)                                       # f0
        + connect(0)                                          # x0, dispatch 0
        + [OP["DISPOSE"]] + forged(5) + [OP["DISPOSE"]] + forged(2)
        + [OP["EMIT"]] + forged(6) + [1] + [OP["DISPOSABLE_RELEASE"]] + forged(3)
        + [OP["FUSER_HANDLE"], 0] + forged(4) + [OP["FUSER_HANDLE"], 1] + forged(0)
        + diffuser_release(0) + run(any_record(0), 1) + diffuser_release(any_record(0))
        + into(0, 3) + run(0, 2)                              # d1 reuses d0's slot
        + diffuser_type(any_record(0)) + diffuser_type(NULL)
        + [OP["CLOSURE_NEW"], 0, 0] + forged(7) + closure_new(0, 1)   # not an ffi dispatch
        + misc(0) + misc(1) + misc(2) + misc(3, 200) + misc(4) + misc(5)
    ),
    # Fuser trees: extract, extract_unless_null, extract_constant, from_all; an effect
    # that runs a diffuser; a source that emits while it is disconnected.
    "fuser_tree": (
        type_new(1)                                           # t3: copying boxes
        + into(1, 3, cb(0))                                   # d0
        + fuser_from(3, cb(0), emit_in_disconnect=True)       # f0
        + extract(POINTER, 0, cb(0))                          # f1: t3 -> pointer
        + extract(3, 1, cb(0x80), unless_null=True)           # f2: pointer -> t3
        + extract_constant(CSTRING, 0, 1)                     # f3
        + fuser_from_all(3, [0, 2])                           # f4
        + connect(4, cb(0, [OP["RUN"], 0, FRESH | 1]))         # x0: runs d0 on each event
        + connect(3, cb(6))                                   # x1
        + emit(0, FRESH | 1) + emit(1, FRESH | 3) + emit(0, 2) + emit(2, FRESH | 2)
        + fuser_release(0) + emit(0, FRESH | 4)
        + dispose(0) + emit(0, 1) + disposable_release(0) + dispose(0)
    ),
    # A source that refuses (alone, and after a sibling connected): the connect fails,
    # the sibling is disconnected, every effect destroyed.
    "refusing_source": (
        fuser_from(POINTER, cb(0))                            # f0
        + fuser_from(POINTER, cb(8), refuse=1)                # f1
        + fuser_from(POINTER, cb(0), refuse=2)                # f2
        + fuser_from_all(POINTER, [0, 1])                     # f3
        + connect(3, cb(0)) + connect(1) + connect(2) + connect(2)
        + fuser_from_all(POINTER, [0, 2, 0]) + connect(4) + connect(4)
        + emit(any_record(0), 1) + emit(0, 1)
    ),
    # Effects that compose new trees over their own diffuser and run them (the graph
    # running merges with the new one), and release handles in use.
    "compose_in_effect": (
        type_new(0)                                           # t3
        + into(0, 3, cb(0, into_all(3, [0, 0]) + run(1, FRESH | 2) + self_release()))  # d0
        + into(2, 3, cb(0, [OP["TYPE_RELEASE"], 3] + self_run(1)))  # d1: once
        + into_all(3, [0, 1])                                 # d2
        + run(2, FRESH | 1) + run(0, FRESH | 2) + run(0, FRESH | 3) + run(0, FRESH | 4)
        + type_release(3) + run(0, FRESH | 5)
    ),
    # Contexts that hold handles and drop them in their destroy, wherever the core
    # destroys them: inside releases, disposes, failed constructors, cleanup.
    "destroy_releases": (
        type_new(0)                                           # t3
        + type_new(1, ctx=cb(0, own=(0, 0)))                  # t4 holds t3
        + into(0, 3, cb(0, own=(0, 1)))                       # d0 holds t4
        + into(0, 4, cb(0, own=(1, 0)))                       # d1 holds d0
        + fuser_from(3, cb(0, own=(1, 1)))                    # f0 holds d1
        + connect(0, cb(0, own=(2, 0)))                       # x0 holds f0
        + into(0, NULL, cb(0, own=(1, 0)))                    # fails: destroy drops d0 at once
        + run(0, FRESH | 1) + run(1, FRESH | 2) + emit(0, FRESH | 3)
        + type_release(3) + type_release(4) + diffuser_release(0) + diffuser_release(1)
        + fuser_release(0) + dispose(0)
    ),
    # A run queued from inside an effect must wait until the effect returned, even when a
    # tree built in a nested pass of another graph merges the two graphs (repro/nested_merge.c).
    "nested_merge": (
        into(1, POINTER, cb(0, self_run(1) + run(1, 2)))     # d0: queues itself, runs d1
        + into(1, POINTER, cb(0, into_all(POINTER, [1, 0], always=True) + run(2, 1)))  # d1
        + run(0, 1)
    ),
    # Types that fail: equality failing on key 5, retain refusing key 4 (DFS_ERR_MEMORY),
    # copying retains, cached values replaced and released.
    "failing_types": (
        type_new(0, fail_equal=True, fail_retain=True)        # t3
        + type_new(1, fail_equal=True)                        # t4
        + type_new(3, equal=False)                            # t5: release only
        + into(0, 3) + into(0, 4) + into(0, 5)                # d0 d1 d2
        + map_(3, 2, cb(0x40))                                # d3: t3 -> t5 (new boxes)
        + map_(4, 1, cb(0x80), borrowed=True)                 # d4: t4 -> t4, borrowed
        + into_when_effect(4, cb(0x80, self_run(2)), cb(0))   # d5
        + run(0, FRESH | 5) + run(0, FRESH | 4) + run(0, FRESH | 1) + run(0, FRESH | 1)
        + run(1, FRESH | 5) + run(1, FRESH | 2) + run(3, FRESH | 4) + run(3, FRESH | 5)
        + run(4, FRESH | 3) + run(4, 3) + run(5, FRESH | 5) + run(5, FRESH | 1)
        + extract_constant(3, NULL, FRESH | 4)
    ),
    # List diffs of every kind: spelled-out lists, generated ones with a failing content
    # callback that runs a diff of its own, sections.
    "lists": (
        list_diff(0x15, 2, 0, old=[0, 1, 2, 0x81, 1], new=[2, 0, 1, 1, 0x80])
        + list_diff(0x26, 0x85, 0x13, seed=77)
        + list_diff(0x05, 0x81, 0, seed=5)
        + list_sections(0x15, 0x04, 0, seed=9)
        + list_sections(0x26, 0x02, 0x05, seed=10)
    ),
    # into_list nodes: fingerprints with a sink that reruns its own diffuser; hashed keys
    # with same_key and same_content under a map; a sink failing on odd calls.
    "into_list": (
        type_new(0)                                                      # t3
        + into_list(0x15, 0x23, 3, cb(0), cb(0, self_run(FRESH | 2)))   # d0
        + into_list(0x56, 0x31, 3)                                       # d1
        + map_(3, 1, cb(0x80))                                           # d2
        + into_list(0x15, 0x11, POINTER, cb(0), cb(5))                   # d3
        + run(0, FRESH | 1) + run(0, FRESH | 2) + run(0, 3) + run(1, FRESH | 4) + run(1, 5)
        + run(2, FRESH | 1) + run(2, FRESH | 3) + run(3, 1) + run(3, 2) + run(3, 0) + run(3, 2)
    ),
    # A loop on the caller's executor: an update that dispatches into its own loop from
    # inside (queued, never nested), an inline handler, an observer that reads the model,
    # a render, an inline feedback sending at once, coalescing, stop, start, dispose.
    "loop_basic": (
        type_new(0)                                                      # t3
        + into(1, 3)                                                     # d0 renders
        + loop_new((3, 3, 3), update=cb(UPDATE_BOTH, loop_self(0, FRESH | 1)),
                   handlers=[(cb(5), INLINE)], key=cb(0x40), inspect=cb(), model=FRESH | 2,
                   start_effects=[FRESH | 1])                            # loop 0
        + observe(0, cb(0, loop_model(0) + loop_is_running(0)))
        + render(0, 0) + feedback(0, INLINE, cb(SEND))
        + loop_dispatch(0, FRESH | 1) + loop_dispatch(0, FRESH | 3) + loop_dispatch(0, 2)
        + loop_stop(0) + loop_dispatch(0, FRESH | 1) + loop_is_running(0) + loop_start(0)
        + loop_dispatch(0, FRESH | 4) + stale_next(0) + loop_dispose(0) + loop_dispatch(0, FRESH | 1)
        + loop_start(0) + loop_release(0) + loop_dispatch(any_record(0), 1)
    ),
    # Callbacks that end their own loop: an observer disposes it from inside a step, a
    # handler stops and restarts it, another loop's update releases its last reference.
    "loop_self_dispose": (
        type_new(0)                                                      # t3
        + loop_new((3, 3, 3), update=cb(UPDATE_BOTH),
                   handlers=[(cb(0, loop_self(1) + loop_self(4) + loop_self(0, FRESH | 2)), INLINE)],
                   inspect=cb())                                         # loop 0
        + loop_new((3, 3, 3), update=cb(UPDATE_MODEL, loop_self(3)), inspect=cb())  # loop 1
        + observe(0, cb(0, loop_self(0, FRESH | 3) + loop_self(2)))
        + loop_dispatch(0, FRESH | 1) + loop_dispatch(0, FRESH | 2)
        + loop_dispatch(1, FRESH | 1) + loop_dispatch(any_record(1), 2)
    ),
    # Jobs held by a handler and by a feedback on a manual executor, sent later from the
    # top level; on-cancel actions; finish, cancel; the loop stops and the jobs end.
    "loop_jobs": (
        type_new(0) + manual_executor()                                  # t3, executor 0
        + loop_new((3, 3, 3), update=cb(UPDATE_BOTH), handlers=[(cb(HOLD), INLINE), (cb(HOLD), 0)],
                   inspect=cb())                                         # loop 0
        + feedback(0, 0, cb(HOLD), overlap=0) + feedback(0, INLINE, cb(HOLD), overlap=1)
        + loop_dispatch(0, FRESH | 1) + run_all(0)
        + job_send(0, FRESH | 2) + job_on_cancel(0, cb(0, loop_self(0, 1))) + job_on_cancel(1)
        + job_finish(1) + job_send(1, FRESH | 1) + job_cancel(2) + job_is_cancelled(2)
        + job_on_cancel(2) + job_send(3, FRESH | 5) + run_next(0) + job_release(0)
        + loop_stop(0) + job_send(3, FRESH | 1) + job_is_cancelled(3) + loop_start(0)
        + loop_dispatch(0, FRESH | 3) + run_all(0)
    ),
    # A loop on a C-written executor (work queued, run by the program in order, once:
    # a second run is refused), steps per run 1; a request feedback on a manual
    # executor; handlers on both.
    "loop_executors": (
        type_new(0) + c_executor(steps=1) + manual_executor()           # t3, executors 0, 1
        + loop_new((3, 3, 3), update=cb(UPDATE_BOTH), handlers=[(cb(SEND), 0), (cb(0), 1)],
                   inspect=cb(), executor=0)                             # loop 0
        + feedback(0, 1, cb(SEND), overlap=2, request=(3, cb(0)))
        + loop_dispatch(0, FRESH | 1) + loop_dispatch(0, FRESH | 2) + work_run() + work_run()
        + work_run(again=True) + run_all(1) + work_run() + work_run() + run_next(1)
        + loop_dispatch(0, FRESH | 3) + run_next(0) + executor_release(0) + work_run()
        + loop_dispose(0) + work_run() + run_all(1)
    ),
    # Two loops and a gear: one pushes its models, the other turns gear events into its
    # own; a journal records the second, its entries and a replay are read; coalescing.
    "loop_gears_journal": (
        type_new(0)                                                      # t3
        + journal_new(3, 3) + gear_new(3)                                # journal 0, gear 0
        + loop_new((3, 3, 3), update=cb(UPDATE_MODEL), inspect=cb())    # loop 0
        + loop_new((3, 3, 3), update=cb(UPDATE_BOTH), key=cb(0x80), inspect=cb(), journal=0)  # loop 1
        + push_to_gear(0, 0, cb(0)) + attach_to_gear(1, 0, cb(0))
        + loop_dispatch(0, FRESH | 1) + loop_dispatch(0, FRESH | 2) + gear_send(0, FRESH | 4)
        + journal_entries(0) + journal_replay(0, 3) + journal_entries(0, fail_at=2)
        + loop_record(0, 0) + loop_dispatch(0, FRESH | 5) + journal_replay(0, POINTER)
        + journal_clear(0) + gear_release(0) + loop_dispatch(0, FRESH | 1) + journal_release(0)
    ),
    # Misuse: NULL config and update, NULL and forged handles, a renderer and sources of
    # other types, a journal of other types, a stale dfs_next.
    "loop_misuse": (
        type_new(0) + type_new(1)                                        # t3, t4
        + loop_new((3, 4, 3), misuse=7) + loop_new((3, 4, 3), misuse=6)
        + loop_new((3, 4, 3), handlers=[(cb(0), INLINE)], misuse=3)
        + journal_new(4, 4) + loop_new((3, 4, 3), journal=0)             # DFS_ERR_TYPE
        + loop_new((3, 4, 3), update=cb(UPDATE_BOTH | 6), inspect=cb())  # loop 0
        + into(0, 4) + render(0, 0) + fuser_from(3) + loop_connect(0, 0)  # DFS_ERR_TYPE twice
        + loop_dispatch(NULL, 1) + [OP["LOOP_DISPATCH"]] + forged(3) + [1] + loop_dispatch(0, FRESH | 3)
        + stale_next(0) + job_send(NULL, 1) + [OP["JOB"], 1] + forged(2) + run_next(NULL)
        + [OP["EXECUTOR"], 2] + forged(4) + work_run(0xE0) + gear_send(NULL, 1)
        + loop_record(0, 0) + loop_release(0) + loop_release(any_record(0)) + loop_is_running(any_record(0))
    ),
    # The next model cancels a feedback's work in progress, whose on-cancel action
    # releases the loop (the last reference): no new work may start (the bug of
    # Tests/Fuzz/repro/cancel_previous_dispose.c).
    "loop_cancel_previous_dispose": (
        loop_new((POINTER, POINTER, POINTER), update=cb(UPDATE_MODEL))  # loop 0
        + feedback(0, INLINE, cb(HOLD), overlap=0)                       # keeps its first job
        + job_on_cancel(0, cb(0, loop_self(3)))
        + job_send(0, 1)
    ),
    # A stop whose on-cancel action stops the loop again, then starts it and dispatches
    # into it: refused until the first stop returns (the bug of
    # Tests/Fuzz/repro/stop_in_stop.c).
    "loop_stop_in_stop": (
        loop_new((POINTER, POINTER, POINTER), update=cb(UPDATE_MODEL), inspect=cb())  # loop 0
        + feedback(0, INLINE, cb(HOLD), overlap=0)                       # keeps its first job
        + job_on_cancel(0, cb(0, loop_self(1) + loop_self(4) + loop_self(0, 1)))
        + loop_stop(0) + loop_is_running(0) + loop_start(0) + loop_dispatch(0, 2)
    ),
    # Feedback handles of each kind, registered by configs and by dfs_loop_add: one
    # handle in two loops, on a stopped and on a disposed loop, released while loops use
    # it, released once too often; jobs sent on and held; a gear between the loops.
    "loop_feedback_handles": (
        type_new(0) + manual_executor() + gear_new(3)                    # t3, executor 0, gear 0
        + feedback_work((3, 3), INLINE, cb(SEND))                        # fb0: sends an event at once
        + feedback_work((3, 3), 0, cb(HOLD), overlap=1)                  # fb1: on the executor, holds its job
        + feedback_work((3, 3), INLINE, cb(0), request=(3, cb(0)))      # fb2: a request feedback
        + feedback_gear((3, 3), 0, cb(0))                                # fb3: pushes into gear 0
        + feedback_gear((3, 3), 0, cb(0), attach=True)                   # fb4: gear 0 into its loops
        + loop_new((3, 3, 3), update=cb(UPDATE_MODEL | 5), handlers=[(cb(0), INLINE)], inspect=cb(),
                   start_effects=[FRESH | 1], feedbacks=[0, 2, 3])       # loop 0
        + loop_new((3, 3, 3), update=cb(UPDATE_MODEL), inspect=cb(), manual_start=True,
                   feedbacks=[0, 4])                                     # loop 1: fb0 serves two loops
        + loop_add(0, 1) + loop_add(1, 2) + loop_add(1, 1)               # loop 1 is stopped
        + loop_dispatch(0, FRESH | 1) + loop_start(1) + loop_dispatch(1, FRESH | 2) + run_all(0)
        + feedback_release(0)                                            # fb0: its loops keep it
        + loop_dispatch(0, FRESH | 3) + loop_dispatch(1, FRESH | 1) + gear_send(0, FRESH | 2)
        + feedback_release(any_record(0)) + feedback_retain(any_record(0))  # stale: DFS_ERR_HANDLE
        + job_send(0, FRESH | 2) + loop_stop(1) + loop_add(1, 0) + loop_start(1)
        + loop_dispose(0) + loop_add(0, 1)                               # a disposed loop: never called
        + loop_dispatch(1, FRESH | 4) + run_all(0) + disposable_release(0) + feedback_retain(1)
        + feedback_release(1) + feedback_release(1) + loop_dispatch(1, FRESH | 5) + loop_release(1)
    ),
    # Feedback handles misused: a NULL function, a bad overlap, no request type, no gear,
    # wrong-kind and stale handles; config entries NULL, stale or of another kind, a NULL
    # array with a count, a count out of range (the handles stay usable); a feedback
    # handle where a loop, job, executor or gear is expected; a callback of a handle
    # that disposes its own loop.
    "loop_feedback_misuse": (
        type_new(0) + gear_new(3)                                        # t3, gear 0
        + feedback_work((3, 3), INLINE, cb(0), null_fn=True) + feedback_work((3, 3), INLINE, cb(0), overlap=3)
        + feedback_work((3, 3), INLINE, cb(0), request=(NULL, cb(0))) + feedback_work((3, 3), LIVE_FEEDBACK, cb(0))
        + feedback_gear((3, 3), NULL) + feedback_gear((3, 3), 0, cb(0), null_out=True)
        + feedback_work((3, 3), INLINE, cb(0), null_out=True)
        + feedback_work((3, 3), INLINE, cb(0, loop_self(0, FRESH | 2) + loop_self(2)))  # fb0: disposes its loop
        + feedback_gear((3, 3), 0, cb(0), attach=True)                   # fb1
        + loop_new((3, 3, 3), feedbacks=[NULL]) + loop_new((3, 3, 3), feedbacks=[0], feedbacks_misuse=1)
        + loop_new((3, 3, 3), feedbacks=[0, 1], feedbacks_misuse=2) + loop_new((3, 3, 3), feedbacks=[1, wrong_kind(1)])
        + loop_new((3, 3, 3), update=cb(UPDATE_BOTH), inspect=cb(), feedbacks=[1, 1])  # loop 0: fb1 twice
        + loop_add(LIVE_FEEDBACK, 0) + loop_add(0, NULL) + loop_add(0, wrong_kind(0)) + loop_add(0, 0, null_out=True)
        + [OP["LOOP_DISPATCH"]] + LIVE_FEEDBACK + [1] + [OP["JOB"], 0] + LIVE_FEEDBACK + [1]
        + [OP["EXECUTOR"], 2] + LIVE_FEEDBACK + [OP["GEAR"], 1] + LIVE_FEEDBACK + [1]
        + loop_add(0, 0) + loop_dispatch(0, FRESH | 1) + gear_send(0, FRESH | 1)
        + feedback_release(1) + loop_new((3, 3, 3), feedbacks=[any_record(1)])  # a stale entry: DFS_ERR_HANDLE
        + feedback_release(0) + feedback_release(0) + feedback_retain(NULL) + feedback_release(NULL)
    ),
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, program in SEEDS.items():
        data = bytes(b & 0xFF for b in program)
        with open(os.path.join(out, "seed_" + name), "wb") as f:
            f.write(data)
        print(f"seed_{name}: {len(data)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
