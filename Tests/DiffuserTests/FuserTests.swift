import XCTest
@testable import Diffuser

final class FuserTests: XCTestCase {
    enum Event: Equatable { case text(String), tap, number(Int) }

    func testFromDeliversOnlyWhileConnected() {
        let source = ManualSource<Int>()
        let fuser = Fuser<Int>.from(source)
        let log = Recorder<Int>()
        source.emit(0)                                 // before connect: dropped
        XCTAssertEqual(source.connects, 0, "building a fuser connects nothing")
        let connection = fuser.connect { log.append($0) }
        source.emit(1); source.emit(2)
        connection.dispose()
        source.emit(3)                                 // after dispose: dropped
        XCTAssertEqual(log.values, [1, 2])
        XCTAssertEqual(source.activeConnections, 0, "dispose disposes the source connection")
    }

    func testDisposeIsIdempotent() {
        let source = ManualSource<Int>()
        let connection = Fuser<Int>.from(source).connect { _ in }
        connection.dispose()
        connection.dispose()
        XCTAssertEqual(source.disposes, 1)
    }

    func testFromClosureSource() {
        var emit: Effect<Int>?
        var disposed = 0
        let fuser = Fuser<Int>.from { effect in
            emit = effect
            return AnonymousDisposable { disposed += 1 }
        }
        let log = Recorder<Int>()
        let c = fuser.connect { log.append($0) }
        emit?(4)
        c.dispose()
        emit?(5)
        XCTAssertEqual(log.values, [4])
        XCTAssertEqual(disposed, 1)
    }

    /// Spotify's `_Disposable` is not class-bound: a source may return a struct.
    func testSourceMayReturnAValueTypeDisposable() {
        struct Counting: _Disposable {
            let log: Recorder<String>
            func dispose() { log.append("disposed") }
        }
        let log = Recorder<String>()
        let fuser = Fuser<Int>.from { effect in
            effect(1)
            return Counting(log: log)
        }
        let got = Recorder<Int>()
        let connection = fuser.connect { got.append($0) }
        connection.dispose()
        connection.dispose()
        XCTAssertEqual(got.values, [1])
        XCTAssertEqual(log.values, ["disposed"], "the connection disposes its source once")
    }

    func testFromAllMergesAndDisposesAll() {
        let a = ManualSource<Int>(), b = ManualSource<Int>()
        let log = Recorder<Int>()
        let fusers = [Fuser<Int>.from(a), .from(b)]
        let c = Fuser.fromAll(fusers).connect { log.append($0) }
        a.emit(1); b.emit(2); a.emit(3)
        c.dispose()
        a.emit(4); b.emit(5)
        XCTAssertEqual(log.values, [1, 2, 3])
        XCTAssertEqual([a.activeConnections, b.activeConnections], [0, 0])
        let v = Fuser<Int>.fromAll(.from(a), .from(b)).connect { log.append($0 * 10) }
        b.emit(6)
        v.dispose()
        let i = Fuser<Int>(.from(a), .from(b)).connect { log.append($0 * 100) }
        a.emit(7)
        i.dispose()
        XCTAssertEqual(log.values, [1, 2, 3, 60, 700])
    }

    func testExtractVariants() {
        let text = ManualSource<String>(), taps = ManualSource<Void>(), numbers = ManualSource<Int>()
        let fuser = Fuser<Event>(
            .extract({ Event.text($0) }, .from(text)),
            .extractConstant(.tap, .from(taps)),
            .extractUnlessNil({ $0 > 0 ? Event.number($0) : nil }, .from(numbers))
        )
        let log = Recorder<Event>()
        let c = fuser.connect { log.append($0) }
        text.emit("hi"); taps.emit(()); numbers.emit(-1); numbers.emit(2)
        c.dispose()
        XCTAssertEqual(log.values, [.text("hi"), .tap, .number(2)])
    }

    func testMultipleConnectionsAreIndependent() {
        let source = ManualSource<Int>()
        let fuser = Fuser<Int>.from(source)
        let first = Recorder<Int>(), second = Recorder<Int>()
        let c1 = fuser.connect { first.append($0) }
        source.emit(1)
        let c2 = fuser.connect { second.append($0) }
        source.emit(2)
        c1.dispose()
        source.emit(3)
        c2.dispose()
        XCTAssertEqual(first.values, [1, 2])
        XCTAssertEqual(second.values, [2, 3])
        XCTAssertEqual(source.connects, 2)
        XCTAssertEqual(source.disposes, 2)
    }

    func testEffectMayDisposeItsOwnConnection() {
        let source = ManualSource<Int>()
        let log = Recorder<Int>()
        var connection: Fuser<Int>.Disposable?
        connection = Fuser<Int>.from(source).connect { v in
            log.append(v)
            connection?.dispose()
        }
        source.emit(1)
        source.emit(2)
        XCTAssertEqual(log.values, [1])
        XCTAssertEqual(source.activeConnections, 0)
    }

    /// A transform that disposes its own connection is the last user code of its event:
    /// the transforms above it and the effect do not run.
    func testTransformMayDisposeItsOwnConnection() {
        let source = ManualSource<Int>()
        let log = Recorder<String>()
        var connection: Fuser<String>.Disposable?
        let fuser = Fuser<String>.extractUnlessNil({ (v: Int) -> String? in
            log.append("outer \(v)")
            return "\(v)"
        }, .extract({ (v: Int) -> Int in
            log.append("inner \(v)")
            if v == 2 { connection?.dispose() }
            return v
        }, .from(source)))
        connection = fuser.connect { log.append("effect \($0)") }
        source.emit(1)
        source.emit(2)
        source.emit(3)
        XCTAssertEqual(log.values, ["inner 1", "outer 1", "effect 1", "inner 2"])
        XCTAssertEqual(source.activeConnections, 0)
    }

    func testSourceEmittingDuringConnectAndDisposeDuringConnect() {
        // A source that emits synchronously while connecting (like a "current value").
        let fuser = Fuser<Int>.from { effect in
            effect(42)
            return AnonymousDisposable {}
        }
        let log = Recorder<Int>()
        let c = fuser.connect { log.append($0) }
        XCTAssertEqual(log.values, [42])
        c.dispose()

        var disposedSource = false
        let selfDisposing = Fuser<Int>.from { effect in
            effect(1)
            return AnonymousDisposable { disposedSource = true }
        }
        var conn: Fuser<Int>.Disposable?
        var count = 0
        conn = selfDisposing.connect { _ in count += 1; conn?.dispose() }
        // conn was nil during the synchronous emission, so dispose now:
        conn?.dispose()
        XCTAssertTrue(disposedSource)
        XCTAssertEqual(count, 1)
    }

    func testThrowingEffectReportsToEmitterAndStaysConnected() {
        var emit: ((Int) throws -> Void)?
        let fuser = Fuser<Int>(tryConnector: { sink in
            emit = sink
            return AnonymousDisposable {}
        })
        let log = Recorder<Int>()
        let c = try! fuser.tryConnect { v in
            if v < 0 { throw TestFailure(tag: "neg") }
            log.append(v)
        }
        XCTAssertThrowsError(try emit?(-1)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "neg")) }
        XCTAssertNoThrow(try emit?(1))
        c.dispose()
        XCTAssertNoThrow(try emit?(2), "after dispose events are dropped silently")
        XCTAssertEqual(log.values, [1])
    }

    func testRefusedConnectionDisposesWhatWasConnected() {
        let ok = ManualSource<Int>()
        let refusing = Fuser<Int>(tryConnector: { _ in throw TestFailure(tag: "refused") })
        let fuser = Fuser<Int>.fromAll(.from(ok), refusing)
        XCTAssertThrowsError(try fuser.tryConnect { _ in })
        XCTAssertEqual(ok.connects, 1)
        XCTAssertEqual(ok.activeConnections, 0)
        // The plain connect drops the refusal: it connects nothing and returns an inert
        // disposable.
        let inert = fuser.connect { _ in }
        XCTAssertEqual(ok.connects, 2)
        XCTAssertEqual(ok.activeConnections, 0, "the source connected before the refusal is disconnected")
        inert.dispose()
    }

    func testAnonymousDisposableRunsOnceAndOnDeinit() {
        var count = 0
        let d = AnonymousDisposable { count += 1 }
        XCTAssertFalse(d.isDisposed)
        d.dispose(); d.dispose()
        XCTAssertEqual(count, 1)
        XCTAssertTrue(d.isDisposed)
        do { _ = AnonymousDisposable { count += 10 } }
        XCTAssertEqual(count, 11)
    }

    final class Button: Fuseable {
        let output = Output<Event>()
        func tap() { output.send(.tap) }
    }

    func testOutputAndFuseable() {
        let button = Button()
        let log1 = Recorder<Event>(), log2 = Recorder<Event>()
        let fuser = Fuser<Event>.fromFuseable(button)
        button.tap()
        let c1 = fuser.connect { log1.append($0) }
        let c2 = button.output.fuser.connect { log2.append($0) }
        button.tap()
        c1.dispose()
        button.tap()
        c2.dispose()
        button.tap()
        XCTAssertEqual(log1.count, 1)
        XCTAssertEqual(log2.count, 2)
    }

    func testOutputTrySendReachesAllAndReportsFirstError() throws {
        let output = Output<Int>()
        let log = Recorder<Int>()
        let c1 = try output.fuser.tryConnect { _ in throw TestFailure(tag: "first") }
        let c2 = output.fuser.connect { log.append($0) }
        XCTAssertThrowsError(try output.trySend(1))
        XCTAssertEqual(log.values, [1])
        c1.dispose(); c2.dispose()
    }

    func testAnySourceWrapsASource() {
        let source = ManualSource<Int>()
        let any = AnySource(source)
        let log = Recorder<Int>()
        let c = Fuser(source: any).connect { log.append($0) }
        source.emit(9)
        c.dispose()
        XCTAssertEqual(log.values, [9])
    }
}
