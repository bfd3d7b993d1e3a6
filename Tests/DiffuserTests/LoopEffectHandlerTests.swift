import XCTest
@testable import Diffuser

/// How a step hands its effects to handlers with and without an executor: what runs in
/// the step, which effects get a job, and a loop stopped or disposed from a handler's
/// callback.
final class LoopEffectHandlerTests: XCTestCase {
    /// A `matching` handler's extract runs in the step for every effect, in handler
    /// order. Without an executor its handler runs there too, right after the extract,
    /// and only for the effects extracted; with one, only the effects extracted are
    /// scheduled. Either way a job is made only for those: the jobs' numbers, which the
    /// session counts out, have no gaps.
    func testAMatchingHandlerRunsItsExtractInTheStepAndMakesJobsOnlyForWhatItTakes() {
        for executor in [nil, ManualExecutor()] {
            let log = Recorder<String>()
            let jobs = Recorder<UInt64>()
            let loop = Loop(
                model: Counter(),
                update: counterUpdate,
                handlers: [
                    .matching({ (effect: CounterEffect) -> CounterEvent? in
                        log.append("extract \(effect)")
                        if case .echo(let event) = effect { return event } else { return nil }
                    }, on: executor) { event, job in
                        log.append("matched \(event)")
                        jobs.append(job.id)
                        job.send(event)
                    },
                    EffectHandler { effect, job in
                        log.append("plain \(effect)")
                        jobs.append(job.id)
                    },
                ]
            )
            loop.dispatch(.effects([.note("a"), .echo(.add(2)), .note("b")]))
            let echo = "echo(DiffuserTests.CounterEvent.add(2))"
            if let executor {
                XCTAssertEqual(executor.pending, 1, "only the extracted effect is scheduled")
                XCTAssertEqual(executor.runAll(), 1)
                XCTAssertEqual(log.values, [
                    "extract note(\"a\")", "plain note(\"a\")", "extract \(echo)", "plain \(echo)",
                    "extract note(\"b\")", "plain note(\"b\")", "matched add(2)",
                ])
            } else {
                XCTAssertEqual(log.values, [
                    "extract note(\"a\")", "plain note(\"a\")", "extract \(echo)", "matched add(2)", "plain \(echo)",
                    "extract note(\"b\")", "plain note(\"b\")",
                ])
            }
            XCTAssertEqual(loop.model.count, 2, "the matched handler's job sent its event")
            let numbers = jobs.values.sorted()
            XCTAssertEqual(numbers.count, 4)
            XCTAssertEqual(numbers, Array(numbers[0]..<numbers[0] + 4), "no job for an effect the extract ignored")
        }
    }

    /// An extract that disposes or stops its loop ends the step there, as any callback
    /// of the step does: its handler is not called (with an executor or without), nor
    /// any later handler or effect.
    func testAnExtractThatClosesTheLoopEndsTheStep() {
        for executor in [nil, ManualExecutor()] {
            for dispose in [true, false] {
                let log = Recorder<String>()
                var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
                let loop = Loop(
                    model: Counter(),
                    update: counterUpdate,
                    handlers: [
                        .matching({ (effect: CounterEffect) -> CounterEffect? in
                            log.append("extract \(effect)")
                            if dispose { loopRef!.dispose() } else { loopRef!.stop() }
                            return effect
                        }, on: executor) { effect, job in
                            log.append("matched \(effect) cancelled \(job.isCancelled)")
                        },
                        EffectHandler { effect, _ in log.append("plain \(effect)") },
                    ],
                    autostart: false
                )
                loopRef = loop
                loop.start()
                loop.dispatch(.effects([.note("a"), .note("b")]))
                executor?.runAll()
                XCTAssertEqual(log.values, ["extract note(\"a\")"], "dispose: \(dispose), executor: \(executor != nil)")
                loopRef = nil
            }
        }
    }

    /// A handler that disposes or stops its loop ends the step there: no later handler
    /// of that effect, and no later effect, is handed anything.
    func testAHandlerThatClosesTheLoopEndsTheStep() {
        for dispose in [true, false] {
            let log = Recorder<String>()
            var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
            let loop = Loop(
                model: Counter(),
                update: counterUpdate,
                handlers: [
                    EffectHandler { effect, job in
                        log.append("first \(effect)")
                        if dispose { loopRef!.dispose() } else { loopRef!.stop() }
                        XCTAssertTrue(job.isCancelled)
                    },
                    EffectHandler { effect, _ in log.append("second \(effect)") },
                ],
                autostart: false
            )
            loopRef = loop
            loop.start()
            loop.dispatch(.effects([.note("a"), .note("b")]))
            XCTAssertEqual(log.values, ["first note(\"a\")"], "dispose: \(dispose)")
            loopRef = nil
        }
    }
}
