/// The benchmark model: a screen of 100 sections of 10 fields (5 Strings, 5 Ints).
///
/// Strings are longer than 15 UTF-8 bytes so they live on the heap: "sharing no storage"
/// then really means separate buffers that equality must compare byte by byte.
struct Section: Equatable {
    var s0, s1, s2, s3, s4: String
    var i0, i1, i2, i3, i4: Int
}

struct Screen: Equatable {
    var sections: [Section]
}

enum Shape {
    static let sections = 100
    static let fields = 10
    static let leaves = sections * fields
}

/// Reads field `j` of a section as the sink's input; used by the hand-written baselines.
@inline(__always)
func fieldHash(_ section: Section, _ j: Int) -> UInt64 {
    switch j {
    case 0: return stringHash(section.s0)
    case 1: return stringHash(section.s1)
    case 2: return stringHash(section.s2)
    case 3: return stringHash(section.s3)
    case 4: return stringHash(section.s4)
    case 5: return UInt64(bitPattern: Int64(section.i0))
    case 6: return UInt64(bitPattern: Int64(section.i1))
    case 7: return UInt64(bitPattern: Int64(section.i2))
    case 8: return UInt64(bitPattern: Int64(section.i3))
    default: return UInt64(bitPattern: Int64(section.i4))
    }
}

/// Cheap but not removable: folds a value into a global the program prints at the end.
nonisolated(unsafe) var sinkAccumulator: UInt64 = 0

@inline(never)
func sink(_ value: UInt64) {
    sinkAccumulator = sinkAccumulator &* 31 &+ value
}

@inline(__always)
func stringHash(_ s: String) -> UInt64 {
    UInt64(s.utf8.count) &+ UInt64(s.utf8.first ?? 0)
}

/// A string with its own heap buffer, equal to `s`.
func deepCopy(_ s: String) -> String {
    String(decoding: Array(s.utf8), as: UTF8.self)
}

func deepCopy(_ section: Section) -> Section {
    Section(s0: deepCopy(section.s0), s1: deepCopy(section.s1), s2: deepCopy(section.s2),
            s3: deepCopy(section.s3), s4: deepCopy(section.s4),
            i0: section.i0, i1: section.i1, i2: section.i2, i3: section.i3, i4: section.i4)
}

func deepCopy(_ screen: Screen) -> Screen {
    Screen(sections: screen.sections.map(deepCopy))
}

func makeScreen(seed: Int) -> Screen {
    Screen(sections: (0..<Shape.sections).map { i in
        func text(_ j: Int) -> String { "section-\(i)-field-\(j)-value-\(seed)" }
        return Section(s0: text(0), s1: text(1), s2: text(2), s3: text(3), s4: text(4),
                       i0: i * 10, i1: i * 10 + 1, i2: i * 10 + 2, i3: i * 10 + 3, i4: i * 10 + 4)
    })
}

/// Changes leaf number `leaf` (0..<1000) in place (copy-on-write for the rest).
func edit(_ screen: inout Screen, leaf: Int, generation: Int) {
    let i = leaf / Shape.fields, j = leaf % Shape.fields
    let marker = "changed-leaf-\(leaf)-generation-\(generation)"
    switch j {
    case 0: screen.sections[i].s0 = marker
    case 1: screen.sections[i].s1 = marker
    case 2: screen.sections[i].s2 = marker
    case 3: screen.sections[i].s3 = marker
    case 4: screen.sections[i].s4 = marker
    case 5: screen.sections[i].i0 = -generation - leaf
    case 6: screen.sections[i].i1 = -generation - leaf
    case 7: screen.sections[i].i2 = -generation - leaf
    case 8: screen.sections[i].i3 = -generation - leaf
    default: screen.sections[i].i4 = -generation - leaf
    }
}
