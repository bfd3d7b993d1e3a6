import Foundation
import XCTest
@testable import Diffuser

/// How registrations reach their loop (`LoopLink`): strongly (see `LoopSideTableTests`)
/// until the loop's dispose has ended, so that registrations kept past their loop keep
/// no loop alive.
final class LoopLinkTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// The link holds the loop through stops and lets go once the dispose has ended.
    func testTheLinkLetsGoOnceTheDisposeHasEnded() {
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let observing = loop.observe { _ in }
        XCTAssertTrue(loop.core.link.loop === loop.core)
        loop.stop()
        XCTAssertTrue(loop.core.link.loop === loop.core, "a stop keeps the registrations' way to the loop")
        loop.start()
        loop.dispose()
        XCTAssertNil(loop.core.link.loop)
        observing.dispose() // reaches no loop, and is harmless
    }

    /// A dispose from a callback of the same thread's stop (a source's disconnect) ends
    /// inside that stop: the link holds the loop until the stop has ended too, as a
    /// registration disposed meanwhile may still need the run being closed.
    func testADisposeNestedInAStopLetsGoWhenTheStopEnds() {
        final class Target: @unchecked Sendable { var loop: CounterLoop? }
        let target = Target()
        let heldInside = Recorder<Bool>()
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        target.loop = loop
        let source = Fuser<CounterEvent>.from { (_: @escaping Effect<CounterEvent>) -> Fuser<CounterEvent>.Disposable in
            AnonymousDisposable {
                guard let loop = target.loop else { return }
                loop.dispose()
                heldInside.append(loop.core.link.loop != nil)
            }
        }
        loop.connect(source)
        loop.stop()
        XCTAssertEqual(heldInside.values, [true])
        XCTAssertTrue(loop.isDisposed)
        XCTAssertNil(loop.core.link.loop)
        target.loop = nil
    }

    /// Drains an executor holds and never runs keep no loop alive once its owners let
    /// go of it; run afterwards, they do nothing.
    func testDrainsAnExecutorHoldsKeepNoLoop() {
        let manual = ManualExecutor()
        let seen = Recorder<Int>()
        weak var core: AnyObject?
        do {
            let loop = CounterLoop(model: Counter(), update: counterUpdate, executor: manual)
            core = loop.core
            loop.observe { seen.append($0.count) }
            manual.runAll()
            loop.dispatch(.increment) // its drain is queued, not run
        }
        XCTAssertNil(core, "a queued drain kept the loop")
        manual.runAll()
        XCTAssertEqual(seen.values, [0])
    }

    /// Registrations kept past their loop, let go of or disposed first, keep no loop
    /// alive, and disposing them afterwards does nothing.
    func testRegistrationsKeptPastTheirLoopKeepNoLoop() {
        for disposedFirst in [false, true] {
            let gear = Gear<Int>()
            let output = Output<CounterEvent>()
            weak var core: AnyObject?
            var kept: [CounterLoop.Disposable] = []
            do {
                let loop = CounterLoop(model: Counter(), update: counterUpdate)
                core = loop.core
                kept.append(loop.observe { _ in })
                kept.append(AnonymousDisposable(disposeFn: loop.subscribe { _ in }.dispose))
                kept.append(loop.add(.attached(to: gear) { n -> CounterEvent? in .add(n) }))
                kept.append(loop.connect(output.fuser))
                gear.send(1)
                if disposedFirst { loop.dispose() }
            }
            XCTAssertNil(core, "disposed first: \(disposedFirst): the registrations kept the loop")
            gear.send(2)
            output.send(.increment)
            for registration in kept { registration.dispose() }
        }
    }
}
