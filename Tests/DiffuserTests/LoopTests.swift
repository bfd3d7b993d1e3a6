import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// The update, the step and its order, effects and errors.
final class LoopTests: XCTestCase {
    func testStepsStoreThePublishAndHandleEffects() {
        let log = Recorder<String>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, _ in log.append("effect \(effect)") }]
        )
        loop.observe { log.append("model \($0.count)") }
        XCTAssertTrue(loop.dispatch(.increment))
        XCTAssertTrue(loop.dispatch(.add(5)))
        XCTAssertEqual(loop.model.count, 6)
        XCTAssertEqual(log.values, [
            "model 0",
            "model 1", "effect note(\"inc->1\")",
            "model 6",
        ])
    }

    func testNextWithoutModelPublishesNothingAndRunsEffects() {
        let log = Recorder<String>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, _ in log.append("effect \(effect)") }]
        )
        loop.observe { log.append("model \($0.count)") }
        loop.dispatch(.silent)
        loop.dispatch(.effects([.note("a"), .note("b")]))
        XCTAssertEqual(log.values, ["model 0", "effect note(\"a\")", "effect note(\"b\")"])
    }

    /// Reflection sees a next as its public properties: `dump` and `Mirror` (and what
    /// prints or compares values through them, such as snapshot tests of traces) show
    /// `model` and `effects`, not the storage a step moves the model out of.
    func testNextReflectsItsModelAndEffects() {
        let next = Next<Int, String>.next(3, effects: ["a"])
        let mirror = Mirror(reflecting: next)
        XCTAssertEqual(mirror.children.map(\.label), ["model", "effects"])
        XCTAssertEqual(mirror.displayStyle, .struct)
        XCTAssertEqual(mirror.children.first?.value as? Int?, 3)
        var dumped = ""
        dump(Next<Int, String>.noChange, to: &dumped)
        XCTAssertEqual(dumped, """
            \u{25BF} Next(no model, effects: [])
              - model: nil
              - effects: 0 elements

            """)
    }

    func testReducerLoop() {
        let models = Recorder<Int>()
        let loop = Loop<Int, Int, Never>(model: 1, reducer: { $0 + $1 })
        loop.observe { models.append($0) }
        loop.dispatch(2)
        loop.dispatch(3)
        XCTAssertEqual(models.values, [1, 3, 6])
        XCTAssertEqual(loop.model, 6)
    }

    func testMutatingUpdate() {
        struct Geo: Equatable { var heading = 0; var location = "" }
        enum GeoEvent { case heading(Int), location(String) }
        let update = Update<Geo, GeoEvent, Never>.mutating { geo, event in
            switch event {
            case .heading(let heading): geo.heading = heading
            case .location(let location): geo.location = location
            }
        }
        let loop = Loop(model: Geo(), update: update)
        loop.dispatch(.heading(90))
        loop.dispatch(.location("Oslo"))
        XCTAssertEqual(loop.model, Geo(heading: 90, location: "Oslo"))
    }

    /// Update, store, observers and feedbacks in registration order, then each effect to
    /// every handler in order; the next event only after all of it.
    func testOrderOfEveryCallbackInAStep() {
        let log = Recorder<String>()
        var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let update = Update<Counter, CounterEvent, CounterEffect> { model, event in
            log.append("update \(event)")
            return try counterUpdate(model, event)
        }
        let loop = Loop(
            model: Counter(),
            update: update,
            handlers: [
                EffectHandler { effect, _ in log.append("h1 \(effect)") },
                EffectHandler { effect, _ in log.append("h2 \(effect)") },
            ],
            feedbacks: [.react { model in log.append("f1 \(model.count)"); return [] }],
            autostart: false
        )
        loopRef = loop
        loop.observe { model in log.append("o1 \(model.count) stored \(loopRef!.model.count)") }
        loop.add(.react { model in log.append("f2 \(model.count)"); return [] })
        loop.observe { model in log.append("o2 \(model.count)") }
        loop.start()
        log.clear()
        loop.dispatch(.effects([.note("a"), .note("b")]))
        loop.dispatch(.increment)
        XCTAssertEqual(log.values, [
            "update effects([Tests.CounterEffect.note(\"a\"), Tests.CounterEffect.note(\"b\")])",
            "h1 note(\"a\")", "h2 note(\"a\")", "h1 note(\"b\")", "h2 note(\"b\")",
            "update increment",
            "f1 1", "o1 1 stored 1", "f2 1", "o2 1",
            "h1 note(\"inc->1\")", "h2 note(\"inc->1\")",
        ].map { $0.replacingOccurrences(of: "Tests.", with: "DiffuserTests.") })
        loopRef = nil
    }

    /// An event dispatched from inside an observer, a feedback or a handler waits until
    /// the step is over, and then the events queued before it.
    func testEventsDispatchedDuringAStepAreQueued() {
        let log = Recorder<String>()
        var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, job in
                log.append("handler \(effect)")
                if case .echo(let event) = effect { XCTAssertTrue(job.send(event)) }
            }],
            autostart: false
        )
        loopRef = loop
        loop.observe { model in
            log.append("observer \(model.count)")
            if model.count == 1 {
                XCTAssertTrue(loopRef!.dispatch(.add(10)))
                log.append("observer dispatched")
            }
        }
        loop.start()
        loop.dispatch(.effects([.echo(.increment), .echo(.add(100))]))
        XCTAssertEqual(log.values, [
            "observer 0",
            "handler echo(DiffuserTests.CounterEvent.increment)",
            "handler echo(DiffuserTests.CounterEvent.add(100))",
            "observer 1", "observer dispatched",
            "handler note(\"inc->1\")",
            "observer 101",
            "observer 111",
        ])
        loopRef = nil
    }

    func testHandlerSendsLaterFromAnotherThread() {
        let done = DispatchSemaphore(value: 0)
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, job in
                guard case .echo(let event) = effect else { return }
                Thread.detachNewThread {
                    XCTAssertTrue(job.send(event))
                    job.finish()
                    XCTAssertFalse(job.send(event), "a finished job sends nothing")
                    done.signal()
                }
            }]
        )
        loop.dispatch(.effects([.echo(.add(7))]))
        done.wait()
        XCTAssertEqual(loop.model.count, 7)
    }

    func testStartEffectsRunAfterTheFirstModelIsPublished() {
        let log = Recorder<String>()
        let loop = Loop(
            model: Counter(count: 3),
            startEffects: [.note("load"), .echo(.increment)],
            update: counterUpdate,
            handlers: [EffectHandler { effect, job in
                log.append("effect \(effect)")
                if case .echo(let event) = effect { job.send(event) }
            }],
            feedbacks: [.react { log.append("feedback \($0.count)"); return [] }]
        )
        XCTAssertEqual(log.values, [
            "feedback 3", "effect note(\"load\")", "effect echo(DiffuserTests.CounterEvent.increment)",
            "feedback 4", "effect note(\"inc->4\")",
        ])
        XCTAssertEqual(loop.model.count, 4)
    }

    func testFailingUpdateKeepsTheModelAndTheLoopGoesOn() {
        let traces = TraceLog()
        let models = Recorder<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate, inspector: traces.inspector)
        loop.observe { models.append($0.count) }
        loop.dispatch(.increment)
        loop.dispatch(.fail)
        loop.dispatch(.increment)
        XCTAssertEqual(loop.model.count, 2)
        XCTAssertEqual(models.values, [0, 1, 2])
        XCTAssertTrue(traces.lines.values.contains("failed fail on Counter(1)"))
    }

    func testThrowingHandlerAndRenderAreReported() {
        let traces = TraceLog()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [
                EffectHandler { _, _ in throw TestFailure(tag: "handler") },
                EffectHandler { effect, _ in traces.lines.append("second handler \(effect)") },
            ],
            inspector: traces.inspector
        )
        loop.render(.map(\.count, .intoWhen({ $0 != $1 }, throwing: { count in
            if count == 1 { throw TestFailure(tag: "render") }
        })))
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(loop.model.count, 2)
        XCTAssertEqual(traces.lines.values, [
            "started Counter(0) []",
            "stepped increment on Counter(0) -> Next(model: Counter(1), effects: [DiffuserTests.CounterEffect.note(\"inc->1\")])",
            "observerFailed",
            "effectFailed note(\"inc->1\")",
            "second handler note(\"inc->1\")",
            "stepped increment on Counter(1) -> Next(model: Counter(2), effects: [DiffuserTests.CounterEffect.note(\"inc->2\")])",
            "effectFailed note(\"inc->2\")",
            "second handler note(\"inc->2\")",
        ])
    }

    func testRefusedEvents() {
        let loop = Loop(model: Counter(), update: counterUpdate, autostart: false)
        XCTAssertFalse(loop.dispatch(.increment))
        XCTAssertThrowsError(try loop.tryDispatch(.increment)) { XCTAssertEqual($0 as? LoopError, .stopped) }
        loop.start()
        XCTAssertNoThrow(try loop.tryDispatch(.increment))
        loop.dispose()
        XCTAssertFalse(loop.dispatch(.increment))
        XCTAssertThrowsError(try loop.tryDispatch(.increment)) { XCTAssertEqual($0 as? LoopError, .disposed) }
        XCTAssertEqual(loop.model.count, 1)
        XCTAssertEqual("\(LoopError.disposed)", "the loop was disposed: it accepts no more events")
    }
}
