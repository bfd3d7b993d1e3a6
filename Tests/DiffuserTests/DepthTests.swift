import Foundation
import XCTest
@testable import Diffuser

/// The depth of diffusers and fusers (the combinators on the longest path down to an
/// effect or a source) and its bound, `maximumDepth`, which keeps a run, an event and a
/// release within a small stack.
final class DepthTests: XCTestCase {
    private static func chain(_ depth: Int, effect: @escaping (Int) -> Void) -> Diffuser<Int> {
        var top = Diffuser<Int>.into(effect)
        for _ in 1..<depth { top = .intoAll([top]) }
        return top
    }

    func testEachCombinatorNestsOneLevelAboveItsDeepestChild() {
        let leaf = Diffuser<Int>.into { _ in }
        XCTAssertEqual(leaf.depth, 1)
        XCTAssertEqual(Diffuser<Int>.intoAlways { _ in }.depth, 1)
        XCTAssertEqual(Diffuser<Int>.intoOnce { _ in }.depth, 1)
        XCTAssertEqual(Diffuser<Int>.intoWhen({ $0 != $1 }, { _ in }).depth, 1)
        XCTAssertEqual(Diffuser<Int>.intoAlways([]).depth, 1, "a fan-out of nothing calls nothing below it")

        let three = Diffuser<Int>.map({ $0 + 1 }, .map({ $0 * 2 }, leaf))
        XCTAssertEqual(three.depth, 3)
        XCTAssertEqual(Diffuser<Int>.intoAll([leaf, three, leaf]).depth, 4, "the deepest child counts, wherever it is")
        XCTAssertEqual(Diffuser<Int>([three, leaf]).depth, 4)
        XCTAssertEqual(Diffuser<Int>.intoAlways([leaf, three]).depth, 4)
        XCTAssertEqual(Diffuser<Int>.intoWhen({ $0 != $1 }, three).depth, 4)
        XCTAssertEqual(Diffuser<Int>.intoOnce(three).depth, 4)
        XCTAssertEqual(Diffuser<Bool>.invert(.into { _ in }).depth, 2)

        struct Pair { var left: Int; var right: String }
        XCTAssertEqual(Diffuser<Pair>.map(\.left, three).depth, 4, "a stored-property key path, read in place")
        XCTAssertEqual(Diffuser<Pair>.map(\.right.count, three).depth, 4, "a computed key path")

        let wide = Diffuser<Int>.intoAll(Array(repeating: leaf, count: 10_000))
        XCTAssertEqual(wide.depth, 2, "width is not depth")
    }

    /// The deepest tree allowed, of the combinator that takes the most stack a level
    /// (`intoAll`: a gate and a fan-out), runs and is released on a thread of 1 MB (a JVM
    /// thread's, or iOS's main thread's), even unoptimized as `swift test` builds it,
    /// where the tree takes up to 512 KB (100 KB optimized).
    func testTheDeepestTreeRunsAndIsReleasedOnASmallStack() {
        let effects = Recorder<Int>()
        let done = expectation(description: "the thread finished")
        let thread = Thread {
            var tree: Diffuser<Int>? = DepthTests.chain(Diffuser<Int>.maximumDepth) { effects.append($0) }
            effects.append(tree?.depth ?? 0)
            for value in [1, 1, 2] { tree?.run(value) }
            tree = nil
            done.fulfill()
        }
        thread.stackSize = 1024 * 1024
        thread.start()
        wait(for: [done], timeout: 60)
        XCTAssertEqual(effects.values, [Diffuser<Int>.maximumDepth, 1, 2], "its depth, then the effect on 1 and on 2")
    }

    func testEachFuserCombinatorNestsOneLevelAboveItsDeepestChild() {
        let source = Fuser<Int>.from { _ in AnonymousDisposable(disposeFn: {}) }
        XCTAssertEqual(source.depth, 1)
        XCTAssertEqual(Fuser<Int>(tryConnector: { _ in AnonymousDisposable(disposeFn: {}) }).depth, 1)
        let two = Fuser<Int>.extract({ $0 + 1 }, source)
        XCTAssertEqual(two.depth, 2)
        XCTAssertEqual(Fuser<String>.extractConstant("tap", two).depth, 3)
        XCTAssertEqual(Fuser<Int>.extractUnlessNil({ $0 > 0 ? $0 : nil }, two).depth, 3)
        XCTAssertEqual(Fuser<Int>.fromAll(source, two, source).depth, 3)
        XCTAssertEqual(Fuser<Int>.fromAll([]).depth, 1)
        XCTAssertEqual(Fuser<Int>.fromAll(Array(repeating: source, count: 10_000)).depth, 2)
        XCTAssertEqual(Fuser<Int>.maximumDepth, Diffuser<Int>.maximumDepth)
    }

    /// A fan-in at the bound connects, delivers an event and is released on a thread of
    /// 1 MB, unoptimized.
    func testTheDeepestFuserDeliversAndIsReleasedOnASmallStack() {
        let events = Recorder<Int>()
        let done = expectation(description: "the thread finished")
        let thread = Thread {
            let emit = Recorder<(Int) -> Void>()
            var fuser = Fuser<Int>.from { effect in
                emit.append(effect)
                return AnonymousDisposable(disposeFn: {})
            }
            for _ in 1..<Fuser<Int>.maximumDepth { fuser = .fromAll([fuser]) }
            events.append(fuser.depth)
            let connection = fuser.connect { events.append($0) }
            emit.values.first?(7)
            connection.dispose()
            done.fulfill()
        }
        thread.stackSize = 1024 * 1024
        thread.start()
        wait(for: [done], timeout: 60)
        XCTAssertEqual(events.values, [Fuser<Int>.maximumDepth, 7])
    }
}

import Testing

/// Composing past the bound stops the program (the Swift combinators do not throw), with
/// its message; each case runs in a child process, which first says how deep its tree is.
@Suite struct DepthBoundTests {
    /// Checks what the child process wrote before it stopped.
    private func expectStopped(_ result: ExitTest.Result?, naming kind: String) {
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("at the bound: 200"))
        #expect(text.contains("a \(kind) nests at most 200 combinators; this one would nest 201"))
    }

    @Test func aDiffuserPastTheBoundStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var top = Diffuser<Int>.into { _ in }
            for _ in 1..<Diffuser<Int>.maximumDepth { top = .map({ $0 }, top) }
            FileHandle.standardError.write(Data("at the bound: \(top.depth)\n".utf8))
            _ = Diffuser<Int>.intoAll([top])
        }
        expectStopped(result, naming: "diffuser")
    }

    @Test func aFuserPastTheBoundStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var top = Fuser<Int>.from { _ in AnonymousDisposable(disposeFn: {}) }
            for _ in 1..<Fuser<Int>.maximumDepth { top = .extract({ $0 }, top) }
            FileHandle.standardError.write(Data("at the bound: \(top.depth)\n".utf8))
            _ = Fuser<Int>.fromAll([top])
        }
        expectStopped(result, naming: "fuser")
    }
}
