import XCTest
import Diffuser

/// `Loop.record(into:)`: a journal attached on the loop's turn (what the C and Java
/// bindings use), recording a running loop from its current model, and stopping.
final class LoopRecordTests: XCTestCase {
    let update = Update<Int, Int, Never> { model, event in
        if event < 0 { throw LoopError.stopped }
        return .next(model + event)
    }

    func entries(_ journal: Journal<Int, Int>) -> [String] {
        journal.entries.map { entry in
            switch entry {
            case .start(let model): return "start \(model)"
            case .event(let event): return "event \(event)"
            }
        }
    }

    func testRecordBeforeTheFirstStartRecordsIt() {
        let journal = Journal<Int, Int>()
        let loop = Loop(model: 1, update: update, autostart: false)
        loop.record(into: journal)
        loop.start()
        loop.dispatch(2)
        loop.dispatch(-1)
        XCTAssertEqual(entries(journal), ["start 1", "event 2", "event -1"])
        XCTAssertEqual(journal.replay(update), [1, 3])
        loop.dispose()
    }

    func testRecordARunningLoopStartsFromItsModel() {
        let journal = Journal<Int, Int>()
        let loop = Loop(model: 0, update: update)
        loop.dispatch(4)
        loop.record(into: journal)
        loop.dispatch(1)
        XCTAssertEqual(entries(journal), ["start 4", "event 1"])
        loop.record(into: nil)
        loop.dispatch(1)
        XCTAssertEqual(entries(journal), ["start 4", "event 1"], "nil stops recording")
        loop.dispose()
        loop.record(into: journal)
        XCTAssertEqual(entries(journal), ["start 4", "event 1"], "a disposed loop records nothing")
    }

    func testRecordTakesEffectOnTheLoopsTurn() {
        let executor = ManualExecutor()
        let journal = Journal<Int, Int>()
        let loop = Loop(model: 0, update: update, executor: executor)
        loop.dispatch(1)
        loop.record(into: journal)
        loop.dispatch(2)
        executor.runAll()
        XCTAssertEqual(entries(journal), ["start 1", "event 2"], "after the entries queued before it")
        loop.dispose()
    }
}
