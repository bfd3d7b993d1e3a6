import XCTest
@testable import DiffuserC

/// The handle table of the C ABI: a released handle never becomes live again, also once a
/// slot has handed out every generation a handle can hold (a slot reused 2^32 - 1 times
/// would take minutes to reach through the C API; the table starts near the end here).
final class HandleTableTests: XCTestCase {
    final class Thing {}

    func isLive(_ table: HandleTable, _ handle: OpaquePointer) -> Bool {
        (try? table.lookup(handle, .type, as: Thing.self, name: "handle")) != nil
    }

    func testAReleasedHandleIsStaleAndItsSlotIsReused() throws {
        let table = HandleTable()
        let first = table.insert(Thing(), kind: .type)
        try table.release(first, .type, name: "first")
        let second = table.insert(Thing(), kind: .type)
        XCTAssertFalse(isLive(table, first), "a released handle is stale")
        XCTAssertTrue(isLive(table, second))
        XCTAssertEqual(UInt(bitPattern: second) & 0xFFFF_FFFF, UInt(bitPattern: first) & 0xFFFF_FFFF,
                       "the slot is reused, with the next generation")
    }

    func testASlotWhoseGenerationsAreSpentIsRetired() throws {
        let table = HandleTable(firstGeneration: UInt32.max - 1)
        let oldest = table.insert(Thing(), kind: .type)
        try table.release(oldest, .type, name: "oldest")
        let last = table.insert(Thing(), kind: .type)
        XCTAssertEqual(UInt(bitPattern: last) >> 32, UInt(UInt32.max), "the slot's last generation")
        try table.release(last, .type, name: "last")

        let next = table.insert(Thing(), kind: .type)
        XCTAssertNotEqual(UInt(bitPattern: next) & 0xFFFF_FFFF, UInt(bitPattern: last) & 0xFFFF_FFFF,
                          "a retired slot is not reused")
        // What the spent slot's handle would be had its generation wrapped to 1 or to 0.
        let slot = UInt(bitPattern: last) & 0xFFFF_FFFF
        for generation: UInt in [0, 1] {
            XCTAssertFalse(isLive(table, OpaquePointer(bitPattern: generation << 32 | slot)!),
                           "no handle of the retired slot is live (generation \(generation))")
        }
        XCTAssertFalse(isLive(table, oldest))
        XCTAssertFalse(isLive(table, last))
        XCTAssertTrue(isLive(table, next))
        XCTAssertThrowsError(try table.release(last, .type, name: "last"), "a second release is refused")
    }
}
