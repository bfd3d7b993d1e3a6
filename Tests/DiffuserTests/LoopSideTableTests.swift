import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Nothing holds a loop's core weakly: a weak reference gives an object a side table,
/// after which every retain and release of it, several at each event, takes the
/// runtime's slow path. Registrations and drains handed to an executor reach the loop
/// through `LoopLink`, a run through its session, a handler's work on an executor
/// unowned.
final class LoopSideTableTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// Whether the runtime gave `object` a side table, which it does for the first weak
    /// reference to a native Swift object: the refcount word (after the metadata
    /// pointer) then has its two top bits set, the slow-RC and side-table marks.
    private func hasSideTable(_ object: AnyObject) -> Bool {
        let word = Unmanaged.passUnretained(object).toOpaque().load(fromByteOffset: MemoryLayout<UInt>.size, as: UInt.self)
        let marks = word >> (UInt.bitWidth - 2)
        return marks == 0b11
    }

    /// The check itself, so that a runtime whose refcount layout differs fails here
    /// rather than passing the check below unseen.
    func testTheSideTableCheckSeesAWeakReference() {
        final class Thing {}
        let plain = Thing()
        XCTAssertFalse(hasSideTable(plain))
        let referred = Thing()
        weak var weakly = referred
        XCTAssertTrue(hasSideTable(referred))
        XCTAssertNotNil(weakly)
        weakly = nil
    }

    /// A running loop with every kind of registration, after events of each way in, a
    /// stop, a start and registrations disposed: its core has no side table.
    func testALoopWithRegistrationsGivesItsCoreNoSideTable() {
        let gear = Gear<Int>()
        let output = Output<CounterEvent>()
        let seen = Recorder<Int>()
        let loop = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
            .attached(to: gear) { n -> CounterEvent? in .add(n) },
        ])
        let observing = loop.observe { seen.append($0.count) }
        let subscribing = loop.subscribe { _ in }
        let adding = loop.add(.react { _ in [] })
        let connecting = loop.connect(output.fuser)
        XCTAssertFalse(hasSideTable(loop.core), "registering")
        loop.dispatch(.increment)
        gear.send(2)
        output.send(.add(3))
        loop.stop()
        loop.start()
        loop.dispatch(.increment)
        XCTAssertFalse(hasSideTable(loop.core), "running")
        subscribing.dispose()
        adding.dispose()
        connecting.dispose()
        XCTAssertFalse(hasSideTable(loop.core), "removing")
        XCTAssertEqual(seen.values, [0, 1, 3, 6, 6, 7]) // the start publishes the kept model again
        observing.dispose()
        loop.dispose()
    }

    /// A handler on an executor whose work ran and whose job sends: no side table.
    func testAHandlerOnAnExecutorGivesItsCoreNoSideTable() {
        let executor = ManualExecutor()
        let kept = Mutex<Job<CounterEvent>?>(nil)
        let loop = CounterLoop(model: Counter(), update: counterUpdate, handlers: [
            EffectHandler(on: executor) { _, job in kept.withLock { $0 = job } },
        ])
        loop.dispatch(.effects([.note("work")]))
        executor.runAll()
        let job = kept.withLock { $0 }
        XCTAssertEqual(job?.send(.add(2)), true)
        XCTAssertEqual(loop.model.count, 2)
        XCTAssertFalse(hasSideTable(loop.core))
        loop.dispose()
    }

    /// A loop on an executor, whose drains are handed over, handed back after
    /// `stepsPerRun` entries, and run inside `execute`: no side table.
    func testALoopOnAnExecutorGivesItsCoreNoSideTable() {
        let manual = ManualExecutor() // one entry a run: every drain is handed back
        let loop = CounterLoop(model: Counter(), update: counterUpdate, executor: manual)
        loop.dispatch(.increment)
        loop.dispatch(.add(2))
        manual.runAll()
        let inline = CounterLoop(model: Counter(), update: counterUpdate,
                                 executor: AnyLoopExecutor(stepsPerRun: 1) { $0() })
        inline.dispatch(.increment)
        inline.dispatch(.add(2))
        XCTAssertEqual([loop.model.count, inline.model.count], [3, 3])
        XCTAssertFalse(hasSideTable(loop.core), "handed over")
        XCTAssertFalse(hasSideTable(inline.core), "run inside execute")
        loop.dispose()
        inline.dispose()
    }

    /// A loop whose drain is left for the end of an outer delivery (a gear event sent
    /// from inside another loop's source delivery): no side table.
    func testADrainOwedToAnOuterDeliveryGivesItsCoreNoSideTable() {
        let gear = Gear<Int>()
        let output = Output<Int>()
        let attached = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
            .attached(to: gear) { n -> CounterEvent? in .add(n) },
        ])
        let fed = CounterLoop(model: Counter(), update: counterUpdate)
        fed.connect(.extract({ (n: Int) -> CounterEvent in
            gear.send(n)
            return .add(n)
        }, output.fuser))
        output.send(4)
        XCTAssertEqual([attached.model.count, fed.model.count], [4, 4])
        XCTAssertFalse(hasSideTable(attached.core))
        attached.dispose()
        fed.dispose()
    }

    /// A handler's work that lets go of the last reference to its loop (which disposes
    /// it) and then throws: the error still reaches the inspector, after the dispose, as
    /// the run's session holds the loop until its callbacks have returned; then the loop
    /// is freed.
    func testAHandlerThatLetsGoOfItsLoopThenThrowsIsReported() {
        let executor = ManualExecutor()
        let traces = Recorder<String>()
        let box = Mutex<CounterLoop?>(nil)
        weak var core: AnyObject?
        do {
            let loop = CounterLoop(
                model: Counter(), update: counterUpdate,
                handlers: [EffectHandler(on: executor) { _, _ in
                    box.withLock { $0 = nil }
                    throw UpdateError()
                }],
                inspector: { traces.append(TraceLog.describe($0)) }
            )
            core = loop.core
            loop.dispatch(.effects([.note("work")]))
            box.withLock { $0 = loop }
        }
        XCTAssertNotNil(core)
        executor.runAll()
        XCTAssertEqual(traces.values.filter { $0.hasPrefix("disposed") || $0.hasPrefix("effectFailed") }
                           .map { String($0.prefix(while: { $0 != " " })) },
                       ["disposed", "effectFailed"])
        XCTAssertNil(core, "the loop outlived its work")
    }

    /// As above, on a background thread, many times (a `Thread` test, so that
    /// `scripts/tsan.sh` runs it): the work lets go of the last reference to its loop,
    /// whose dispose then runs from inside the work, and throws; every error is reported
    /// and every loop freed.
    func testAHandlerThatLetsGoOfItsLoopOnABackgroundThread() {
        for _ in 0..<200 {
            let executor = BackgroundExecutor()
            let reported = Atomic<Int>(0)
            let box = Mutex<CounterLoop?>(nil)
            let done = DispatchSemaphore(value: 0)
            weak var core: AnyObject?
            do {
                let loop = CounterLoop(
                    model: Counter(), update: counterUpdate,
                    handlers: [EffectHandler(on: executor) { _, _ in
                        defer { done.signal() }
                        box.withLock { $0 = nil }
                        throw UpdateError()
                    }],
                    inspector: { if case .effectFailed = $0 { reported.add(1, ordering: .relaxed) } }
                )
                core = loop.core
                box.withLock { $0 = loop }
                loop.dispatch(.effects([.note("work")]))
            }
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
            // The work's thread lets go of the loop as its callback leaves the session.
            var spins = 0
            while core != nil && spins < 10_000 { spins += 1; usleep(100) }
            XCTAssertNil(core, "the loop outlived its work")
            XCTAssertEqual(reported.load(ordering: .relaxed), 1)
        }
    }
}
