import Diffuser

/// The library built with key paths, the README's own style: the same tree as
/// `LibraryRenderer` with `map(\.sections[i], ...)` and `map(\.s0, ...)` in place of
/// closures. Measured next to it in the same rounds, so that the ratio of the two says
/// what key paths cost (or save) against closures on the same work.
struct KeyPathLibraryRenderer: Renderer {
    let diffuser: Diffuser<Screen>

    init() {
        diffuser = Self.build()
    }

    static func build() -> Diffuser<Screen> {
        let sections: [Diffuser<Screen>] = (0..<Shape.sections).map { i in
            .map(\.sections[i], section())
        }
        return .intoAll(sections)
    }

    /// The diffuser of one section: one gated leaf per field, each reached by a
    /// stored-property key path.
    static func section() -> Diffuser<Section> {
        let text: (String) -> Void = { sink(stringHash($0)) }
        let number: (Int) -> Void = { sink(UInt64(bitPattern: Int64($0))) }
        let leaves: [Diffuser<Section>] = [
            .map(\.s0, .into(text)),
            .map(\.s1, .into(text)),
            .map(\.s2, .into(text)),
            .map(\.s3, .into(text)),
            .map(\.s4, .into(text)),
            .map(\.i0, .into(number)),
            .map(\.i1, .into(number)),
            .map(\.i2, .into(number)),
            .map(\.i3, .into(number)),
            .map(\.i4, .into(number)),
        ]
        return .intoAll(leaves)
    }

    mutating func render(_ screen: Screen) {
        diffuser.run(screen)
    }
}
