import Dispatch
import XCTest
@testable import Diffuser

/// The loop's model is lent to the update and to observers where it lies, and a new
/// model is moved into place: these tests check that every model is still released
/// exactly once, at the right time, and that what a released model frees may use the
/// loop.
final class LoopModelOwnershipTests: XCTestCase {
    /// Something a model holds, counted while alive; its `onRelease` runs in its deinit.
    final class Part: @unchecked Sendable {
        /// The parts made (positive ids) and freed (negated ids), in order.
        static let log = Recorder<Int>()
        let id: Int
        var onRelease: (@Sendable (Int) -> Void)?

        init(_ id: Int) {
            self.id = id
            Part.log.append(id)
        }

        deinit {
            Part.log.append(-id)
            onRelease?(id)
        }

        /// The parts alive now; fails if a part was freed twice.
        static var alive: [Int] {
            var alive: [Int] = []
            for id in log.values {
                if id > 0 {
                    alive.append(id)
                } else if let index = alive.firstIndex(of: -id) {
                    alive.remove(at: index)
                } else {
                    XCTFail("part \(-id) freed twice")
                }
            }
            return alive
        }
    }

    struct Model: Sendable {
        var part: Part
        var title: String
        var items: [Int]
    }

    override func setUp() {
        super.setUp()
        Part.log.clear()
    }

    /// Every model a loop stored is released once it is replaced, and the last one when
    /// the loop goes away; the update and the observers see each model as stored.
    func testEveryModelIsReleasedOnceAndTheLastWithTheLoop() {
        let seen = Recorder<String>()
        do {
            let loop = Loop<Model, Int, Never>(model: Model(part: Part(100), title: "m0", items: [0]), reducer: { model, event in
                seen.append("update \(model.part.id) \(model.title) \(model.items)")
                return Model(part: Part(event), title: "m\(event)", items: model.items + [event])
            })
            let observing = loop.subscribe { model in seen.append("observe \(model.part.id) \(model.title)") }
            for event in 1...3 { loop.dispatch(event) }
            XCTAssertEqual(Part.alive, [3], "each replaced model's part was released")
            XCTAssertEqual(loop.model.title, "m3")
            observing.dispose()
        }
        XCTAssertEqual(Part.alive, [], "the loop released its last model")
        XCTAssertEqual(seen.values, [
            "observe 100 m0",
            "update 100 m0 [0]", "observe 1 m1",
            "update 1 m1 [0, 1]", "observe 2 m2",
            "update 2 m2 [0, 1, 2]", "observe 3 m3",
        ])
    }

    /// A model replaced by a step is released after the loop's lock is given back: what
    /// it frees may read the loop's model and dispatch to it. Released under the lock,
    /// the read would never return.
    func testWhatAReplacedModelFreesMayUseTheLoop() {
        let released = Recorder<String>()
        let loop = Loop<Model, Int, Never>(model: Model(part: Part(100), title: "m0", items: []), reducer: { model, event in
            var next = model
            next.part = Part(event)
            next.title = "m\(event)"
            return next
        })
        weak let weakLoop = loop
        let part = loop.model.part
        part.onRelease = { id in
            guard let loop = weakLoop else { return }
            released.append("part \(id) released; the loop holds \(loop.model.title)")
            loop.dispatch(2)
        }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            loop.dispatch(1)
            done.signal()
        }
        // The test's own reference goes first, so that the step's release is the last.
        _ = consume part
        guard done.wait(timeout: .now() + 10) == .success else {
            XCTFail("the step's release of the old model did not return")
            // The loop's lock stays held: disposing the loop would wait forever.
            _ = Unmanaged.passRetained(loop)
            return
        }
        XCTAssertEqual(released.values, ["part 100 released; the loop holds m1"])
        XCTAssertEqual(loop.model.title, "m2", "the event dispatched from the release was handled")
    }

    /// A failing update, an update that keeps the model, and a stopped loop leave the
    /// stored model as it was, released once in the end.
    func testAModelKeptThroughFailuresAndStopsIsReleasedOnce() {
        struct Failure: Error {}
        do {
            let loop = Loop<Model, Int, Never>(
                model: Model(part: Part(100), title: "m0", items: []),
                update: Update { model, event in
                    switch event {
                    case 0: throw Failure()
                    case 1: return .noChange
                    default: return .next(Model(part: Part(event), title: "m\(event)", items: model.items + [event]))
                    }
                }
            )
            loop.dispatch(0)
            loop.dispatch(1)
            XCTAssertEqual(Part.alive, [100])
            XCTAssertEqual(loop.model.title, "m0")
            loop.dispatch(5)
            loop.stop()
            XCTAssertEqual(Part.alive, [5])
            loop.start()
            loop.dispatch(6)
            XCTAssertEqual(Part.alive, [6])
            XCTAssertEqual(loop.model.items, [5, 6])
        }
        XCTAssertEqual(Part.alive, [])
    }

    /// A model replaced by a step is released once the step is over, after the step's
    /// observers, feedbacks and handlers: what its last reference frees (a deinit, a C
    /// type's release) never comes between the calls of a step, and a release that
    /// stops the loop still lets the step publish its model and hand over its effects.
    func testAReplacedModelIsReleasedOnceItsStepIsOver() {
        let calls = Recorder<String>()
        let loop = Loop<Model, Int, String>(
            model: Model(part: Part(100), title: "m0", items: []),
            update: Update { model, event in
                calls.append("update \(model.title)")
                return .next(Model(part: Part(event), title: "m\(event)", items: []), effects: ["effect \(event)"])
            },
            handlers: [EffectHandler { effect, _ in calls.append("handle \(effect)") }],
            feedbacks: [.react { model in
                calls.append("feedback \(model.title)")
                return []
            }]
        )
        let observing = loop.subscribe { model in calls.append("observe \(model.title)") }
        weak let weakLoop = loop
        loop.model.part.onRelease = { id in
            calls.append("release \(id)")
            weakLoop?.stop()
        }
        loop.dispatch(1)
        XCTAssertEqual(calls.values, [
            "feedback m0", "observe m0",
            "update m0", "feedback m1", "observe m1", "handle effect 1", "release 100",
        ])
        XCTAssertFalse(loop.isRunning, "the release stopped the loop")
        XCTAssertEqual(Part.alive, [1])
        observing.dispose()
    }
}
