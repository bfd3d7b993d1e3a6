import XCTest
@testable import Diffuser
import DiffuserC
import CDiffuserFFI

/// A gate keeps the new value after every successful run, equal or not (`keep(new)`),
/// so a `keep` that is user code (which may fail or count) is called whatever the bits of
/// the new value: its error surfaces, and its call is in the order of calls.
final class GateKeepTests: XCTestCase {
    struct KeepFailed: Error, Equatable {}

    final class Log {
        var calls: [String] = []
        var keeps = 0
    }

    /// An equality whose `keep` is user code that can fail (the protocol allows it: "A
    /// throw aborts the run there, cache unchanged"). It fails from its second call on.
    struct FailingKeepEquality<V: Equatable>: EqualityFunction {
        let log: Log
        func equals(_ old: V, _ new: V) throws -> Bool {
            log.calls.append("equals(\(old), \(new))")
            return old == new
        }
        func keep(_ value: V) throws -> V {
            log.keeps += 1
            log.calls.append("keep(\(value))")
            if log.keeps >= 2 { throw KeepFailed() }
            return value
        }
    }

    /// The same, as a "did change" predicate (`intoWhen(calling:)`).
    struct FailingKeepChange<V: Equatable>: ChangeFunction {
        let log: Log
        func didChange(_ old: V, _ new: V) throws -> Bool {
            log.calls.append("didChange(\(old), \(new))")
            return old != new
        }
        func keep(_ value: V) throws -> V {
            log.keeps += 1
            log.calls.append("keep(\(value))")
            if log.keeps >= 2 { throw KeepFailed() }
            return value
        }
    }

    struct Recorder<V>: EffectFunction {
        let log: Log
        func run(_ value: V) { log.calls.append("effect(\(value))") }
    }

    /// An equal value with the cache's very bits is kept all the same: a failing keep
    /// fails the run, and its call is in the log.
    func testIntoCallsKeepForAnEqualValueWithTheSameBits() {
        let log = Log()
        let diffuser = Diffuser<Int>.into(comparing: FailingKeepEquality<Int>(log: log), calling: Recorder<Int>(log: log))
        XCTAssertNoThrow(try diffuser.tryRun(1))
        XCTAssertThrowsError(try diffuser.tryRun(1), "keep(1) throws on its second call") { error in
            XCTAssertEqual(error as? KeepFailed, KeepFailed())
        }
        XCTAssertEqual(log.calls, ["keep(1)", "effect(1)", "equals(1, 1)", "keep(1)"])
    }

    /// Equal values with other bits (0.0 == -0.0) and with the same bits fail alike: which
    /// error a run reports does not depend on the bits of an equal value.
    func testKeepsErrorDoesNotDependOnTheBitsOfAnEqualValue() {
        func secondRunThrows(_ first: Double, _ second: Double) -> Bool {
            let log = Log()
            let diffuser = Diffuser<Double>.into(comparing: FailingKeepEquality<Double>(log: log),
                                                 calling: Recorder<Double>(log: log))
            try? diffuser.tryRun(first)
            do { try diffuser.tryRun(second); return false } catch { return true }
        }
        XCTAssertTrue(secondRunThrows(0.0, -0.0), "equal, other bits: keep is called and fails")
        XCTAssertTrue(secondRunThrows(0.0, 0.0), "equal, same bits: keep must be called and fail all the same")
    }

    /// `intoWhen(calling:)` with a predicate whose keep is user code: kept all the same.
    func testIntoWhenCallsKeepForAnUnchangedValueWithTheSameBits() {
        let log = Log()
        let diffuser = Diffuser<String>.intoWhen(calling: FailingKeepChange<String>(log: log),
                                                 effect: Recorder<String>(log: log))
        XCTAssertNoThrow(try diffuser.tryRun("a"))
        XCTAssertThrowsError(try diffuser.tryRun("a"))
        XCTAssertEqual(log.calls, ["keep(a)", "effect(a)", "didChange(a, a)", "keep(a)"])
    }

    // MARK: The C ABI: a type's retain on an equal value at the same address

    final class RetainBox {
        var calls = 0
        var failFrom = Int.max
    }

    /// A C type with a retain (which may fail) and no release, as the header allows
    /// ("release: NULL: no-op"). The header: retain is "called when the core keeps a value
    /// beyond the call", returning NULL "fails the call that needed it with
    /// DFS_ERR_MEMORY"; a gate keeps the new value on every run. The same pointer run twice
    /// is retained twice, as an equal value at another address is.
    func testCIntoRetainsAnEqualValueAtTheSameAddress() throws {
        func secondRun(sameAddress: Bool) throws -> (status: dfs_status, retains: Int) {
            let box = RetainBox()
            box.failFrom = 2
            let ctx = Unmanaged.passRetained(box).toOpaque()
            let retain: dfs_retain_fn = { value, ctx in
                let box = Unmanaged<RetainBox>.fromOpaque(ctx!).takeUnretainedValue()
                box.calls += 1
                return box.calls >= box.failFrom ? nil : value
            }
            let equal: dfs_equal_fn = { a, b, _ in
                a!.load(as: Int.self) == b!.load(as: Int.self) ? 1 : 0
            }
            var type: OpaquePointer?
            XCTAssertEqual(dfs_type_new("int", equal, retain, nil, ctx, { Unmanaged<RetainBox>.fromOpaque($0!).release() }, &type), DFS_OK)
            defer { _ = dfs_type_release(type) }
            var diffuser: OpaquePointer?
            XCTAssertEqual(dfs_diffuser_into(type, { _, _ in 0 }, nil, nil, &diffuser), DFS_OK)
            defer { _ = dfs_diffuser_release(diffuser) }
            let a = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            let b = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            a.pointee = 7
            b.pointee = 7
            defer { a.deallocate(); b.deallocate() }
            XCTAssertEqual(dfs_diffuser_run(diffuser, a), DFS_OK)
            let status = dfs_diffuser_run(diffuser, sameAddress ? a : b)
            return (status, box.calls)
        }
        let other = try secondRun(sameAddress: false)
        XCTAssertEqual(other.status, DFS_ERR_MEMORY, "equal value at another address: retain fails the run")
        XCTAssertEqual(other.retains, 2)
        let same = try secondRun(sameAddress: true)
        XCTAssertEqual(same.status, DFS_ERR_MEMORY, "the gate keeps the new value: its retain must be called")
        XCTAssertEqual(same.retains, 2)
    }
}
