import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// When a loop on the caller's executor handles the events its attached feedbacks make
/// of gear events: on the sending thread, once `propagate` has returned (outside the
/// gear subscription's lock), before the gear moves on to its next loop; inside a
/// delivery of a loop's source or another gear's propagate, once that delivery is over;
/// and never lost on the way.
final class LoopGearTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// Two loops attached to one gear: each one's step runs after its propagate and
    /// before the next loop's propagate, all before `send` returns.
    func testEachLoopHandlesItsEventAfterItsPropagateBeforeTheNextLoop() {
        let gear = Gear<Int>()
        let log = Recorder<String>()
        func attachedLoop(_ name: String) -> CounterLoop {
            let loop = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
                .attached(to: gear) { n -> CounterEvent? in
                    log.append("\(name) propagates \(n)")
                    return .add(n)
                },
            ])
            loop.observe { log.append("\(name) at \($0.count)") }
            return loop
        }
        let first = attachedLoop("first")
        let second = attachedLoop("second")
        gear.send(3)
        XCTAssertEqual(log.values, [
            "first at 0", "second at 0",
            "first propagates 3", "first at 3",
            "second propagates 3", "second at 3",
        ])
        first.dispose()
        second.dispose()
    }

    /// A gear send from a transform of another loop's source delivery: the attached
    /// loop's step runs once that delivery is over, as a nested source's does, not
    /// under the source connection's lock; still before the source's `send` returns.
    func testAGearSendInsideASourcesDeliveryIsHandledOnceTheDeliveryIsOver() {
        let gear = Gear<Int>()
        let output = Output<Int>()
        let log = Recorder<String>()
        let sourceLoop = CounterLoop(model: Counter(), update: counterUpdate)
        sourceLoop.connect(.extract({ (n: Int) -> CounterEvent in
            gear.send(n)
            log.append("transform sent \(n)")
            return .add(n)
        }, output.fuser))
        let attachedLoop = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
            .attached(to: gear) { n -> CounterEvent? in .add(n * 10) },
        ])
        attachedLoop.observe { log.append("attached at \($0.count)") }
        output.send(2)
        XCTAssertEqual(log.values, ["attached at 0", "transform sent 2", "attached at 20"])
        XCTAssertEqual(sourceLoop.model.count, 2)
        sourceLoop.dispose()
        attachedLoop.dispose()
    }

    /// A propagate that sends into another gear and into another loop's source: the
    /// events those make are handled once the propagate's delivery is over (its own
    /// loop's event first, then theirs, in the order they were sent), not under the gear
    /// subscription's lock; still before `send` returns.
    func testEventsSentFromAPropagateAreHandledOnceItsDeliveryIsOver() {
        let gear = Gear<Int>()
        let innerGear = Gear<Int>()
        let output = Output<Int>()
        let log = Recorder<String>()
        let innerGearLoop = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
            .attached(to: innerGear) { n -> CounterEvent? in .add(n) },
        ])
        let sourceLoop = CounterLoop(model: Counter(), update: counterUpdate)
        sourceLoop.connect(.extract({ (n: Int) -> CounterEvent in .add(n) }, output.fuser))
        let attachedLoop = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
            .attached(to: gear) { n -> CounterEvent? in
                innerGear.send(n * 10)
                output.send(n * 100)
                log.append("propagate returns")
                return .add(n)
            },
        ])
        innerGearLoop.observe { log.append("inner gear's loop at \($0.count)") }
        sourceLoop.observe { log.append("source's loop at \($0.count)") }
        attachedLoop.observe { log.append("attached at \($0.count)") }
        gear.send(1)
        XCTAssertEqual(log.values, [
            "inner gear's loop at 0", "source's loop at 0", "attached at 0",
            "propagate returns", "attached at 1", "inner gear's loop at 10", "source's loop at 100",
        ])
        innerGearLoop.dispose()
        sourceLoop.dispose()
        attachedLoop.dispose()
    }

    /// A propagate that removes its own feedback (the loop's turn runs at once, on this
    /// thread, and disposes the gear subscription from inside it) and then returns an
    /// event: the event, accepted while the run goes on, is handled before `send`
    /// returns; the next gear event reaches the loop no more.
    func testAPropagateThatRemovesItsOwnFeedbackStillHasItsEventHandled() {
        let gear = Gear<Int>()
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let registration = LoopGearRaceTests.RegistrationSlot()
        registration.value = loop.add(.attached(to: gear) { n -> CounterEvent? in
            registration.value?.dispose()
            return .add(n)
        })
        gear.send(5)
        XCTAssertEqual(loop.model.count, 5, "the event made after the removal was lost")
        gear.send(7)
        XCTAssertEqual(loop.model.count, 5)
        loop.dispose()
    }

    /// A gear that lives on keeps nothing of a loop attached to it once the loop is
    /// disposed, or let go (which disposes it), before the gear sends again.
    func testAGearKeepsNoLoopOnceItIsDisposedOrLetGo() {
        for disposes in [true, false] {
            let gear = Gear<Int>()
            weak var core: AnyObject?
            do {
                let loop = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
                    .attached(to: gear) { n -> CounterEvent? in .add(n) },
                ])
                core = loop.core
                gear.send(1)
                XCTAssertEqual(loop.model.count, 1)
                if disposes { loop.dispose() }
            }
            XCTAssertNil(core, disposes ? "the gear kept a disposed loop" : "the gear kept a loop let go")
            withExtendedLifetime(gear) {}
        }
    }

    /// A loop let go keeps no core alive whatever its run went through (a start refused,
    /// a dispose before the start's turn, a propagate that stopped it), even while a job
    /// of its run lives on: the run's pausing, which holds the core, goes at its end.
    func testAGearOrAJobKeepsNoLoopLetGo() {
        enum Case: CaseIterable { case refusedStart, disposedBeforeStartRuns, stoppedFromPropagate, letGoRunning, jobOutlives }
        for c in Case.allCases {
            let gear = Gear<Int>()
            weak var core: AnyObject?
            var keptJob: AnyObject?
            do {
                let executor = ManualExecutor()
                let box = Mutex<CounterLoop?>(nil)
                let loop = CounterLoop(model: Counter(), update: counterUpdate, feedbacks: [
                    .attached(to: gear) { n -> CounterEvent? in
                        if c == .stoppedFromPropagate { box.withLock { $0 }?.stop() }
                        return .add(n)
                    },
                ], executor: executor)
                box.withLock { $0 = loop }
                core = loop.core
                switch c {
                case .refusedStart:
                    executor.runAll()
                    loop.dispose()
                    XCTAssertFalse(loop.start())
                case .disposedBeforeStartRuns:
                    loop.dispose() // the start entry has not run
                case .stoppedFromPropagate:
                    executor.runAll()
                    gear.send(1)
                    executor.runAll()
                case .letGoRunning:
                    executor.runAll()
                    gear.send(1)
                    executor.runAll()
                case .jobOutlives:
                    executor.runAll()
                    if let s = loop.core.session {
                        keptJob = Job(session: s)
                    }
                }
                box.withLock { $0 = nil }
                executor.runAll()
            }
            XCTAssertNil(core, "\(c): the core outlived its loop")
            withExtendedLifetime(gear) {}
            withExtendedLifetime(keptJob) {}
        }
    }
}
