import Foundation
import XCTest
@testable import Diffuser

/// How registrations reach their loop (`LoopLink`): strongly, so that the loop's core
/// gets no side table (which would put every retain of it on the runtime's slow path),
/// until the loop's dispose has ended, so that registrations kept past their loop keep
/// no loop alive.
final class LoopLinkTests: XCTestCase {
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
