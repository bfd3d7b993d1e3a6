#!/usr/bin/env python3
"""Compiles and runs every snippet of README.md that is tagged `<!-- check: KIND -->`.

Kinds: swiftpm + swift and swift-loop (a package depending on this checkout; the two
Swift snippets make its main.swift, in that order, and run), c and c-loop (each compiled
with pkg-config against an installed libdiffuser, run), cmake (the c program built
through find_package), gradle + java and java-loop (a Gradle project depending on the
jar; each class run). Each program's output must contain the lines listed in EXPECT, in
order for the loops. Fails on any untested tag.

usage: check_readme.py --prefix INSTALL_PREFIX --jar DIFFUSER_JAR
"""
import argparse, os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECT = {
    "swift": ["title: Inbox", "subtitle: 3 unread", "count: 3", "subtitle: 2 unread", "count: 2",
              'event: typed("hello")', "event: tapped", "rows: reload all 3",
              "rows: delete [1] insert [2] moves 1 reload [0]", "screen: tapped"],
    "c": ["title: Inbox", "title: Archive", "DFS_ERR_HANDLE: diffuser is not a live dfs_diffuser handle (released or invalid)"],
    "java": ["title: Inbox", "title: Archive", "event: clicked", "source disconnected"],
    "swift-loop": ["items: 0", "saved: true", "items: 1", "saved: false", "storing 1 items", "saved: true",
                   "dispatch after dispose: false"],
    "c-loop": ["model: 1", "model: 5", "model: 12", "too big: 12", "model: 1",
               "DFS_ERR_DISPOSED: the loop was disposed: it accepts no more events"],
    "java-loop": ["model: 1", "model: 5", "model: 12", "too big: 12", "model: 1"],
}
# Loops print their lines in this order exactly (one step at a time, first in first out).
IN_ORDER = {"swift-loop", "c-loop", "java-loop"}


def snippets():
    text = open(os.path.join(ROOT, "README.md")).read()
    found = {}
    for kind, body in re.findall(r"<!-- check: ([\w-]+) -->\s*```\w*\n(.*?)```", text, re.S):
        if kind in found:
            sys.exit(f"README: two snippets tagged {kind}")
        found[kind] = body
    return found


def run(cmd, cwd, env=None, label=""):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"README {label}: {' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def expect(kind, output):
    lines = output.splitlines()
    if kind in IN_ORDER:
        seen = [line for line in lines if line in EXPECT[kind]]
        if seen != EXPECT[kind]:
            sys.exit(f"README {kind} snippet: printed {seen}, expected exactly {EXPECT[kind]}:\n{output}")
    missing = [want for want in EXPECT[kind] if want not in lines]
    if missing:
        sys.exit(f"README {kind} snippet: output lacks {missing}:\n{output}")
    print(f"README {kind} snippet: ran, {len(EXPECT[kind])} expected lines seen")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--jar", required=True)
    parser.add_argument("--skip-swift", action="store_true", help="for quick local runs")
    args = parser.parse_args()
    found = snippets()
    known = {"swiftpm", "swift", "swift-loop", "c", "c-loop", "cmake", "gradle", "java", "java-loop"}
    if set(found) != known:
        sys.exit(f"README: tagged snippets {sorted(found)}, expected {sorted(known)}")
    prefix = os.path.abspath(args.prefix)
    libdir = os.path.join(prefix, "lib")
    env = dict(os.environ)
    # As the README says: PKG_CONFIG_PATH set, and the programs find the library through
    # their run path, not LD_LIBRARY_PATH.
    env["PKG_CONFIG_PATH"] = os.path.join(libdir, "pkgconfig")
    env.pop("LD_LIBRARY_PATH", None)
    work = tempfile.mkdtemp(prefix="diffuser-readme-")
    try:
        # C with pkg-config.
        cdir = os.path.join(work, "c")
        os.makedirs(cdir)
        open(os.path.join(cdir, "hello.c"), "w").write(found["c"])
        flags = run(["pkg-config", "--cflags", "--libs", "diffuser"], cdir, env, "c").split()
        pc_libdir = run(["pkg-config", "--variable=libdir", "diffuser"], cdir, env, "c").strip()
        flags.append(f"-Wl,-rpath,{pc_libdir}")
        run(["cc", "-Wall", "-Werror", "hello.c", *flags, "-o", "hello"], cdir, env, "c")
        expect("c", run(["./hello"], cdir, env, "c"))
        open(os.path.join(cdir, "counter.c"), "w").write(found["c-loop"])
        run(["cc", "-Wall", "-Werror", "counter.c", *flags, "-o", "counter"], cdir, env, "c-loop")
        expect("c-loop", run(["./counter"], cdir, env, "c-loop"))

        # The same program through find_package.
        open(os.path.join(cdir, "CMakeLists.txt"), "w").write(found["cmake"])
        run(["cmake", "-S", ".", "-B", "build", "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"], cdir, env, "cmake")
        run(["cmake", "--build", "build"], cdir, env, "cmake")
        expect("c", run(["./build/hello"], cdir, env, "cmake"))
        print("README cmake snippet: find_package(Diffuser) built and ran the C program")

        # Java through the jar, in a Gradle project; no LD_LIBRARY_PATH: the jar loads its own.
        jdir = os.path.join(work, "java")
        os.makedirs(os.path.join(jdir, "src", "main", "java"))
        os.makedirs(os.path.join(jdir, "libs"))
        shutil.copy(args.jar, os.path.join(jdir, "libs", "diffuser.jar"))
        open(os.path.join(jdir, "build.gradle"), "w").write(found["gradle"])
        open(os.path.join(jdir, "settings.gradle"), "w").write("rootProject.name = 'hello'\n")
        open(os.path.join(jdir, "src", "main", "java", "Hello.java"), "w").write(found["java"])
        open(os.path.join(jdir, "src", "main", "java", "Counter.java"), "w").write(found["java-loop"])
        jenv = dict(os.environ)
        jenv.pop("LD_LIBRARY_PATH", None)
        # The snippet is what any Gradle accepts (the `java` plugin and `implementation`):
        # it compiles here with Debian's Gradle; the program then runs on the class path.
        run(["gradle", "--offline", "--no-daemon", "-q", "compileJava"], jdir, jenv, "gradle")
        classpath = os.pathsep.join([os.path.join(jdir, "build", "classes", "java", "main"),
                                     os.path.join(jdir, "libs", "diffuser.jar")])
        out = run(["java", "-cp", classpath, "Hello"], jdir, jenv, "java")
        expect("java", out)
        expect("java-loop", run(["java", "-cp", classpath, "Counter"], jdir, jenv, "java-loop"))
        print("README gradle snippet: the jar dependency compiled and ran")

        # Swift: a package that depends on this checkout.
        if not args.skip_swift:
            sdir = os.path.join(work, "swift")
            os.makedirs(os.path.join(sdir, "MyApp", "Sources", "MyApp"))
            os.symlink(ROOT, os.path.join(sdir, "diffuser"))
            open(os.path.join(sdir, "MyApp", "Package.swift"), "w").write(found["swiftpm"])
            # One main.swift: the Diffuser snippet, then the loop's (its import line dropped).
            loop = found["swift-loop"].replace("import Diffuser\n", "", 1)
            open(os.path.join(sdir, "MyApp", "Sources", "MyApp", "main.swift"), "w").write(found["swift"] + "\n" + loop)
            out = run(["swift", "run", "--scratch-path", os.path.join(work, "swift-build"), "MyApp"],
                      os.path.join(sdir, "MyApp"), None, "swift")
            expect("swift", out)
            expect("swift-loop", out)
            print("README swiftpm snippet: the package dependency resolved and built")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("README snippets: all checked")


if __name__ == "__main__":
    main()
