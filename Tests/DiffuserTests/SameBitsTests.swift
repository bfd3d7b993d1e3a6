import XCTest
@testable import Diffuser
import PackedFixtures

/// `sameBits`, which lets a gate skip rewriting a cache that holds the very bits of the
/// new value: compared a word at a time for values of whole words, with `memcmp`
/// otherwise. A wrong "same" would leave an older value in a cache; these cover both
/// paths and a difference in every word.
final class SameBitsTests: XCTestCase {
    private func same<A>(_ a: A, _ b: A) -> Bool {
        withUnsafePointer(to: a) { a in withUnsafePointer(to: b) { b in sameBits(a, b) } }
    }

    struct ThreeWords: Equatable {
        var a: UInt64, b: UInt64, c: UInt64
    }

    struct ThreeBytes: Equatable {
        var a: UInt8, b: UInt8, c: UInt8
    }

    struct ThreeInt32s: Equatable {
        var a: Int32, b: Int32, c: Int32
    }

    func testWordsDifferingInAnyWordAreNotTheSame() {
        let base = ThreeWords(a: 1, b: 2, c: 3)
        XCTAssertTrue(same(base, base))
        XCTAssertTrue(same(base, ThreeWords(a: 1, b: 2, c: 3)))
        XCTAssertFalse(same(base, ThreeWords(a: 0, b: 2, c: 3)))
        XCTAssertFalse(same(base, ThreeWords(a: 1, b: 0, c: 3)))
        XCTAssertFalse(same(base, ThreeWords(a: 1, b: 2, c: 0)))
        XCTAssertFalse(same(base, ThreeWords(a: 1, b: 2, c: 3 | 1 << 63)))
    }

    func testValuesNotOfWholeWordsAreComparedByteByByte() {
        XCTAssertEqual(MemoryLayout<ThreeBytes>.size, 3)
        XCTAssertTrue(same(ThreeBytes(a: 1, b: 2, c: 3), ThreeBytes(a: 1, b: 2, c: 3)))
        XCTAssertFalse(same(ThreeBytes(a: 1, b: 2, c: 3), ThreeBytes(a: 1, b: 2, c: 4)))
        XCTAssertEqual(MemoryLayout<ThreeInt32s>.size, 12)
        XCTAssertTrue(same(ThreeInt32s(a: 1, b: 2, c: 3), ThreeInt32s(a: 1, b: 2, c: 3)))
        XCTAssertFalse(same(ThreeInt32s(a: 1, b: 2, c: 3), ThreeInt32s(a: 1, b: 2, c: 4)))
        XCTAssertTrue(same(true, true))
        XCTAssertFalse(same(true, false))
    }

    /// A part read in place may lie at any address (a field of a packed C struct): the
    /// word path must not assume its type's alignment.
    func testValuesAtUnalignedAddresses() {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        defer { bytes.deallocate() }
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
        let a = bytes + 1, b = bytes + 33
        a.storeBytes(of: 0x0102_0304_0506_0708 as UInt64, as: UInt64.self)
        b.storeBytes(of: 0x0102_0304_0506_0708 as UInt64, as: UInt64.self)
        XCTAssertTrue(sameBits(a.assumingMemoryBound(to: UInt64.self), b.assumingMemoryBound(to: UInt64.self)))
        b.storeBytes(of: 0x0102_0304_0506_0709 as UInt64, as: UInt64.self)
        XCTAssertFalse(sameBits(a.assumingMemoryBound(to: UInt64.self), b.assumingMemoryBound(to: UInt64.self)))
    }

    func testReferencesAreTheSameOnlyWhenIdentical() {
        let text = String(repeating: "a heap string ", count: 4)
        let copy = String(decoding: Array(text.utf8), as: UTF8.self)
        XCTAssertTrue(same(text, text))
        XCTAssertEqual(text, copy)
        XCTAssertFalse(same(text, copy), "equal strings in two buffers are not the same bits")
    }

    func testSameBitsIsNotEquality() {
        XCTAssertTrue(same(Double.nan, Double.nan), "the same NaN has the same bits, though it is not ==")
        XCTAssertFalse(same(0.0, -0.0), "0.0 == -0.0, with different bits")
        XCTAssertTrue(same((), ()), "a value of no bytes")
    }

    /// A gate handed an equal value with other bits keeps the new one, so that the next
    /// comparison is against it: seen through a predicate that records what it compared.
    func testAGateKeepsAnEqualValueWithOtherBits() {
        let first = String(repeating: "x", count: 40)
        let second = String(decoding: Array(first.utf8), as: UTF8.self)
        var olds: [String] = []
        let diffuser = Diffuser<String>.intoWhen({ old, _ in
            olds.append(old)
            return false
        }, { (_: String) in })
        diffuser.run(first)
        diffuser.run(second)
        diffuser.run(first)
        XCTAssertEqual(olds.count, 2)
        XCTAssertTrue(same(olds[1], second), "the second comparison's old value is the second run's value")
    }
}

/// Key paths into a packed C struct: their parts lie at odd addresses, and are read in
/// place, compared and kept like any other.
final class UnalignedPartTests: XCTestCase {
    func testKeyPathsIntoAPackedStruct() {
        XCTAssertEqual(MemoryLayout<PackedRecord>.offset(of: \.wide), 1)
        XCTAssertEqual(MemoryLayout<PackedRecord>.offset(of: \.last), 10)
        var wides: [UInt64] = [], lasts: [UInt64] = []
        let diffuser = Diffuser<PackedRecord>.intoAlways(
            .map(\.wide, .into { wides.append($0) }),
            .map(\.last, .into { lasts.append($0) })
        )
        diffuser.run(PackedRecord(tag: 1, wide: 7, tail: 1, last: 1 << 40))
        diffuser.run(PackedRecord(tag: 2, wide: 7, tail: 2, last: 1 << 40))
        diffuser.run(PackedRecord(tag: 3, wide: 8, tail: 3, last: 1 << 41))
        diffuser.run(PackedRecord(tag: 4, wide: 8, tail: 4, last: 1 << 41))
        XCTAssertEqual(wides, [7, 8])
        XCTAssertEqual(lasts, [1 << 40, 1 << 41])
    }
}
