#!/usr/bin/env python3
"""check_abi.py — the C header and the Swift @_cdecl exports cannot drift apart.

    check_abi.py [--header include/diffuser.h] [--sources Sources/DiffuserC] LIB.so
    check_abi.py --self-test LIB.so

Checks:
  (a) every function prototype of the header is exported by the built library
      (`nm -D --defined-only`) and is implemented by a @_cdecl function;
  (b) every @_cdecl function is declared in the header, and every exported dfs_*
      symbol is declared in the header;
  (c) each function's parameter count, parameter types and return type match, through
      an explicit C type -> Swift type mapping (see C_TO_SWIFT and the rules in
      swift_type_for). A C type the mapping does not know fails the check.

--self-test copies the header and the sources to a temporary directory, applies one
deliberate drift at a time, and checks that each one is caught (and that the
unmodified copy passes).

Exit status: 0 when everything matches, 1 on drift, 2 on usage errors.

One script because the header parser, the Swift parser and the check meet in one
mapping (C_TO_SWIFT and swift_type_for), and the self-test mutates exactly what they
parse; CMake runs it by path, with nothing to import.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# --------------------------------------------------------------------------------------
# The mapping: a C type (canonical spelling, see canonical_c_type) -> the Swift type the
# @_cdecl function must use. Opaque handles, enums, structs and function pointer
# typedefs are mapped by the rules in swift_type_for, from what the header declares.
# --------------------------------------------------------------------------------------

C_TO_SWIFT = {
    "int": "Int32",
    "unsigned int": "UInt32",
    "size_t": "Int",
    "int32_t": "Int32",
    "uint32_t": "UInt32",
    "int *": "UnsafeMutablePointer<Int32>?",
    "int64_t": "Int64",
    "uint64_t": "UInt64",
    "uintptr_t": "UInt",
    "double": "Double",
    "const void *": "UnsafeRawPointer?",
    "void *": "UnsafeMutableRawPointer?",
    "const char *": "UnsafePointer<CChar>?",
    "void * *": "UnsafeMutablePointer<UnsafeMutableRawPointer?>?",
    "const void * *": "UnsafeMutablePointer<UnsafeRawPointer?>?",
    # A function pointer out parameter: `void (**fn)(void)`.
    "void (* *)(void)": "UnsafeMutablePointer<(@convention(c) () -> Void)?>?",
}

# Return types: where Swift may use a non-optional type for a pointer the C API
# documents as never NULL, both spellings are accepted.
C_RETURN_TO_SWIFT = {
    "void": {"", "Void", "()"},
    "int": {"Int32"},
    "const char *": {"UnsafePointer<CChar>", "UnsafePointer<CChar>?"},
    "const void *": {"UnsafeRawPointer?", "UnsafeRawPointer"},
    "void *": {"UnsafeMutableRawPointer?", "UnsafeMutableRawPointer"},
}


class Drift(Exception):
    pass


# --------------------------------------------------------------------------------------
# C header
# --------------------------------------------------------------------------------------

def strip_c(text):
    """Removes comments, C++ guards and preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"#ifdef\s+__cplusplus.*?#endif", " ", text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return re.sub(r"\bDFS_API\b", " ", text)


def split_statements(text):
    """Top-level statements ending in ';' (braces of enum/struct bodies are kept)."""
    statements, depth, current = [], 0, []
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == ";" and depth == 0:
            statements.append(" ".join("".join(current).split()))
            current = []
        else:
            current.append(ch)
    rest = " ".join("".join(current).split())
    if rest:
        statements.append(rest)
    return [s for s in statements if s]


def split_top(text, sep=","):
    """Splits on `sep` outside (), [], {} and <> (Swift generics); `->` is not a bracket."""
    parts, depth, current, i = [], 0, [], 0
    while i < len(text):
        ch = text[i]
        if ch == "-" and i + 1 < len(text) and text[i + 1] == ">":
            current.append("->")
            i += 2
            continue
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    last = "".join(current).strip()
    if last or parts:
        parts.append(last)
    return parts


C_KEYWORDS = {"const", "void", "char", "int", "unsigned", "signed", "long", "short", "float",
              "double", "struct", "enum", "size_t"}


def canonical_c_type(param, named=True):
    """The canonical spelling of a C parameter's type (its name removed):
    words and stars separated by single spaces, e.g. "dfs_diffuser * const *"."""
    fp = re.fullmatch(r"(.+?)\(\s*(\*+)\s*(\w*)\s*\)\s*\((.*)\)", param)
    if fp:
        ret = canonical_c_type(fp.group(1).strip(), named=False)
        args = ", ".join(canonical_c_type(a.strip(), named=True) if a.strip() != "void" else "void"
                         for a in split_top(fp.group(4)))
        return "%s (%s)(%s)" % (ret, " ".join(fp.group(2)), args)
    tokens = re.findall(r"[A-Za-z_]\w*|\*", param)
    if named and len(tokens) > 1 and tokens[-1] != "*" and tokens[-1] not in C_KEYWORDS:
        tokens = tokens[:-1]
    return " ".join(tokens)


class Header:
    def __init__(self, text):
        self.opaque = set()      # typedef struct X X;
        self.structs = set()     # typedef struct X {...} X;
        self.enums = set()       # typedef enum X {...} X;
        self.fn_typedefs = set() # typedef R (*X)(...);
        self.functions = {}      # name -> (return type, [param types], declaration)
        for st in split_statements(strip_c(text)):
            self._statement(st)

    def _statement(self, st):
        m = re.fullmatch(r"typedef struct (\w+) (\w+)", st)
        if m:
            self.opaque.add(m.group(2))
            return
        m = re.fullmatch(r"typedef (struct|enum) (\w+)? ?\{.*\} ?(\w+)", st)
        if m:
            (self.structs if m.group(1) == "struct" else self.enums).add(m.group(3))
            return
        m = re.fullmatch(r"typedef (.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", st)
        if m:
            self.fn_typedefs.add(m.group(2))
            return
        if st.startswith("typedef") or st.startswith("extern"):
            return
        m = re.fullmatch(r"(.+?)\b(dfs_\w+)\s*\((.*)\)", st)
        if m:
            ret = canonical_c_type(m.group(1).strip(), named=False)
            raw = m.group(3).strip()
            params = [] if raw in ("", "void") else [canonical_c_type(p) for p in split_top(raw)]
            self.functions[m.group(2)] = (ret, params, st)
            return
        raise Drift("cannot parse header statement: %r" % st)

    def swift_type_for(self, ctype):
        """The Swift type a parameter of C type `ctype` must have, or None if unknown."""
        if ctype in C_TO_SWIFT:
            return {C_TO_SWIFT[ctype]}
        words = ctype.split(" ")
        if len(words) == 1 and words[0] in self.enums:
            return {words[0]}
        if len(words) == 1 and words[0] in self.fn_typedefs:
            return {words[0] + "?"}
        if words[0] in self.opaque:
            rest = " ".join(words[1:])
            return {
                "*": {"OpaquePointer?"},
                "* *": {"UnsafeMutablePointer<OpaquePointer?>?"},
                "* const *": {"UnsafePointer<OpaquePointer?>?"},
            }.get(rest)
        if words[0] == "const" and len(words) == 3 and words[2] == "*" and (words[1] in self.enums or words[1] in self.structs):
            return {"UnsafePointer<%s>?" % words[1]}
        if len(words) == 2 and words[1] == "*" and words[0] in self.structs:
            return {"UnsafeMutablePointer<%s>?" % words[0]}
        return None

    def swift_return_for(self, ctype):
        if ctype in C_RETURN_TO_SWIFT:
            return C_RETURN_TO_SWIFT[ctype]
        words = ctype.split(" ")
        if len(words) == 1 and words[0] in self.enums:
            return {words[0]}
        if len(words) == 2 and words[0] in self.opaque and words[1] == "*":
            return {"OpaquePointer?", "OpaquePointer"}
        return None


# --------------------------------------------------------------------------------------
# Swift @_cdecl functions
# --------------------------------------------------------------------------------------

def matching_paren(text, start):
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise Drift("unbalanced parentheses")


def parse_swift(files):
    """name -> (swift name, [param types], return type, file:line) for every @_cdecl."""
    found = {}
    for path, text in files.items():
        code = re.sub(r"//[^\n]*", "", text)
        for m in re.finditer(r'@_cdecl\(\s*"(\w+)"\s*\)', code):
            fm = re.compile(r"\s*(?:@\w+(?:\([^)]*\))?\s*|public\s+|internal\s+|func\s+)*?func\s+(\w+)\s*\(").match(code, m.end())
            line = code.count("\n", 0, m.start()) + 1
            where = "%s:%d" % (os.path.basename(path), line)
            if not fm:
                raise Drift("%s: @_cdecl(\"%s\") is not followed by a func" % (where, m.group(1)))
            open_paren = fm.end() - 1
            close = matching_paren(code, open_paren)
            params = []
            for p in split_top(code[open_paren + 1:close]):
                if not p:
                    continue
                if ":" not in p:
                    raise Drift("%s: cannot parse parameter %r" % (where, p))
                ptype = p.split(":", 1)[1]
                ptype = ptype.split("=", 1)[0] if "=" in ptype and "->" not in ptype else ptype
                params.append(norm_swift(ptype.replace("@escaping", "")))
            brace = code.index("{", close)
            tail = code[close + 1:brace].strip()
            ret = norm_swift(tail[2:]) if tail.startswith("->") else ""
            if m.group(1) in found:
                raise Drift("%s: @_cdecl(\"%s\") is defined twice" % (where, m.group(1)))
            found[m.group(1)] = (fm.group(1), params, ret, where)
    return found


def norm_swift(t):
    return re.sub(r"\s+", "", t)


# --------------------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------------------

def exported_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    symbols = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in ("T", "t", "W", "i"):
            symbols.add(parts[2].split("@")[0])
    return symbols


def check(header_text, swift_files, exports, verbose=True):
    """Returns a list of drift messages (empty when everything matches)."""
    say = print if verbose else (lambda *a, **k: None)
    problems = []
    header = Header(header_text)
    cdecls = parse_swift(swift_files)
    say("header: %d functions; %d opaque handles (%s); enums %s; structs %s; %d callback typedefs"
        % (len(header.functions), len(header.opaque), ", ".join(sorted(header.opaque)),
           ", ".join(sorted(header.enums)), ", ".join(sorted(header.structs)), len(header.fn_typedefs)))
    say("swift:  %d @_cdecl functions in %d files" % (len(cdecls), len(swift_files)))
    if exports is not None:
        say("lib:    %d exported dfs_* symbols" % len([s for s in exports if s.startswith("dfs_")]))

    for name in sorted(header.functions):
        ret, params, decl = header.functions[name]
        mistakes = []
        if exports is not None and name not in exports:
            mistakes.append("declared in the header but not exported by the library")
        if name not in cdecls:
            mistakes.append("declared in the header but no @_cdecl(\"%s\") implements it" % name)
        else:
            sname, sparams, sret, where = cdecls[name]
            if len(sparams) != len(params):
                mistakes.append("%d parameters in the header, %d in %s" % (len(params), len(sparams), where))
            for i, (ctype, stype) in enumerate(zip(params, sparams)):
                want = header.swift_type_for(ctype)
                if want is None:
                    mistakes.append("parameter %d: C type '%s' is not in the C->Swift mapping" % (i + 1, ctype))
                elif stype not in {norm_swift(w) for w in want}:
                    mistakes.append("parameter %d: C '%s' must be Swift '%s', %s has '%s'"
                                    % (i + 1, ctype, " or ".join(sorted(want)), where, stype))
            want_ret = header.swift_return_for(ret)
            if want_ret is None:
                mistakes.append("return type '%s' is not in the C->Swift mapping" % ret)
            elif sret not in {norm_swift(w) for w in want_ret}:
                mistakes.append("returns C '%s', which must be Swift '%s'; %s returns '%s'"
                                % (ret, " or ".join(sorted(w or "Void" for w in want_ret)), where, sret or "Void"))
        if mistakes:
            for mistake in mistakes:
                problems.append("%s: %s" % (name, mistake))
            say("DRIFT %-34s %s" % (name, "; ".join(mistakes)))
        else:
            say("ok    %-34s (%s) -> %s" % (name, ", ".join(params) or "void", ret))

    for name in sorted(set(cdecls) - set(header.functions)):
        problems.append("%s: @_cdecl in %s is not declared in the header" % (name, cdecls[name][3]))
        say("DRIFT %-34s @_cdecl in %s is not declared in the header" % (name, cdecls[name][3]))
    if exports is not None:
        for name in sorted(s for s in exports if s.startswith("dfs") and s not in header.functions):
            problems.append("%s: exported by the library but not declared in the header" % name)
            say("DRIFT %-34s exported by the library but not declared in the header" % name)
    return problems


def read_sources(directory):
    """Every Swift file under `directory`, subdirectories included (Loop/, ...)."""
    files = {}
    for folder, subfolders, entries in os.walk(directory):
        subfolders.sort()
        for entry in sorted(entries):
            if entry.endswith(".swift"):
                path = os.path.join(folder, entry)
                with open(path, encoding="utf-8") as f:
                    files[path] = f.read()
    return files


# --------------------------------------------------------------------------------------
# Self-test: every kind of drift is caught
# --------------------------------------------------------------------------------------

def self_test(header_path, sources_dir, exports):
    # (what, where, regular expression, replacement, part of the expected message).
    # Each edit applies to the first match (in the first Swift file that matches).
    mutations = [
        ("a parameter type changed in the header (size_t -> int)",
         "header", r"(dfs_diffuser_into_all\([^;]*?)size_t count", r"\1int count",
         "C 'int' must be Swift 'Int32'"),
        ("a prototype removed from the header",
         "header", r"const char \*dfs_version\(void\);", "",
         "dfs_version: @_cdecl"),
        ("a parameter added in Swift",
         "swift", r"(func dfs_diffuser_run\([^)]*)\)", r"\1, _ flags: Int32)",
         "dfs_diffuser_run: 2 parameters in the header, 3"),
        ("a handle parameter typed as a raw pointer in Swift",
         "swift", r"(func dfs_diffuser_run\(\s*_ \w+: )OpaquePointer\?", r"\1UnsafeRawPointer?",
         "dfs_diffuser_run: parameter 1: C 'dfs_diffuser *' must be Swift 'OpaquePointer?'"),
        ("a @_cdecl renamed",
         "swift", r'@_cdecl\("dfs_diffuser_invert"\)', '@_cdecl("dfs_diffuser_negate")',
         "dfs_diffuser_negate: @_cdecl"),
        ("a return type changed in the header to a type the mapping does not know",
         "header", r"\bint dfs_abi_version\(void\);", "long dfs_abi_version(void);",
         "dfs_abi_version: return type 'long'"),
        ("a return type changed in Swift",
         "swift", r"(func dfs_abi_version\(\)\s*->\s*)Int32", r"\1Int",
         "dfs_abi_version: returns C 'int'"),
        ("a new prototype that nothing implements or exports",
         "header", r"\Z", "\ndfs_status dfs_diffuser_reset(dfs_diffuser *diffuser);\n",
         "dfs_diffuser_reset: declared in the header but not exported"),
        ("a parameter of an unknown C type",
         "header", r"(dfs_diffuser_run\(dfs_diffuser \*\w+, )const void \*", r"\1const float *",
         "dfs_diffuser_run: parameter 2: C type 'const float *' is not in the C->Swift mapping"),
        ("a callback typedef parameter turned into void * in Swift",
         "swift", r"(func dfs_diffuser_into_always\([^)]*?_ effect: )dfs_effect_fn\?", r"\1UnsafeMutableRawPointer?",
         "must be Swift 'dfs_effect_fn?'"),
    ]

    with open(header_path, encoding="utf-8") as f:
        header_text = f.read()
    swift_files = read_sources(sources_dir)
    failures = 0
    tmp = tempfile.mkdtemp(prefix="check_abi_")
    try:
        # Work on copies, as a developer would edit them.
        shutil.copy(header_path, os.path.join(tmp, "diffuser.h"))
        for path in swift_files:
            shutil.copy(path, os.path.join(tmp, os.path.basename(path)))
        base = check(header_text, swift_files, exports, verbose=False)
        if base:
            print("FAIL the unmodified copy does not pass:\n  " + "\n  ".join(base))
            return 1
        print("ok   the unmodified copy passes")
        for title, where, pattern, replacement, expected in mutations:
            if where == "header":
                edited, n = re.subn(pattern, replacement, header_text, count=1)
                if n != 1:
                    print("FAIL %s: the header has no text matching %r any more" % (title, pattern))
                    failures += 1
                    continue
                with open(os.path.join(tmp, "diffuser.h"), "w", encoding="utf-8") as f:
                    f.write(edited)
            else:
                hits = [p for p, t in swift_files.items() if re.search(pattern, t)]
                if not hits:
                    print("FAIL %s: no Swift source matches %r any more" % (title, pattern))
                    failures += 1
                    continue
                edited = re.sub(pattern, replacement, swift_files[hits[0]], count=1)
                with open(os.path.join(tmp, os.path.basename(hits[0])), "w", encoding="utf-8") as f:
                    f.write(edited)
            # Check the edited copy from disk.
            with open(os.path.join(tmp, "diffuser.h"), encoding="utf-8") as f:
                edited_header = f.read()
            problems = check(edited_header, read_sources(tmp), exports, verbose=False)
            caught = [p for p in problems if expected in p]
            if caught:
                print("ok   caught: %s\n       -> %s" % (title, caught[0]))
            else:
                print("FAIL not caught: %s (expected a message containing %r; got %r)" % (title, expected, problems))
                failures += 1
            # Restore the copies.
            shutil.copy(header_path, os.path.join(tmp, "diffuser.h"))
            for path in swift_files:
                shutil.copy(path, os.path.join(tmp, os.path.basename(path)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (len(mutations) + 1 - failures, failures))
    return 1 if failures else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib", nargs="?", help="the built libdiffuser.so (omit with --no-lib)")
    ap.add_argument("--header", default=os.path.join(root, "include", "diffuser.h"))
    ap.add_argument("--sources", default=os.path.join(root, "Sources", "DiffuserC"))
    ap.add_argument("--no-lib", action="store_true", help="skip the export checks")
    ap.add_argument("--self-test", action="store_true", help="check that drift in edited copies is caught")
    args = ap.parse_args()
    if args.lib is None and not args.no_lib:
        ap.error("give the library to check, or --no-lib")
    exports = None if args.no_lib else exported_symbols(args.lib)
    try:
        if args.self_test:
            return self_test(args.header, args.sources, exports)
        with open(args.header, encoding="utf-8") as f:
            header_text = f.read()
        problems = check(header_text, read_sources(args.sources), exports)
    except Drift as e:
        print("check_abi: %s" % e)
        return 1
    if problems:
        print("\ncheck_abi: %d drift(s) between %s and %s:" % (len(problems), args.header, args.sources))
        for p in problems:
            print("  " + p)
        return 1
    print("\ncheck_abi: header, @_cdecl exports and library agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
