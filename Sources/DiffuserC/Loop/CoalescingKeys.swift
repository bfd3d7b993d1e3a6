import CDiffuserFFI
@_spi(Bindings) import Diffuser

// A loop's coalescing keys given by C (`dfs_key_fn`), and handed back (`dfs_key_done_fn`).

/// The coalescing of a loop made through the C ABI: the key `function` gives an event, as
/// the core compares keys. With `done`, each key is a `HandedKey` that hands its number
/// back when the core lets go of it; without, the number itself.
func cCoalescing(_ function: CFunction<dfs_key_fn>, done: dfs_key_done_fn?) -> (CValue) -> AnyHashable? {
    guard let done else {
        return { event in
            var key: UInt64 = 0
            return function.fn(event.pointer, &key, function.ctx) == 1 ? AnyHashable(key) : nil
        }
    }
    return { event in
        var key: UInt64 = 0
        guard function.fn(event.pointer, &key, function.ctx) == 1 else { return nil }
        return AnyHashable(HandedKey(key, done: done, of: function))
    }
}

/// A coalescing key that C gave, equal to any other with its number, which hands the
/// number back to C (`done`) when the core lets go of it: the core holds a key while an
/// event queued with it waits, so a binding that numbers its keys (Java's, whose keys are
/// objects) can forget a number once all its keys came back, and keeps no number for
/// events long gone.
///
/// Each key the coalescing function gives is one of these, and the core keeps each for as
/// long as it needs it, so `done` runs once for each key given. The key holds the
/// function's context, whose destroy therefore runs after the last `done`.
final class HandedKey: Hashable, @unchecked Sendable {
    let number: UInt64
    private let done: dfs_key_done_fn
    private let function: CFunction<dfs_key_fn>

    init(_ number: UInt64, done: dfs_key_done_fn, of function: CFunction<dfs_key_fn>) {
        self.number = number
        self.done = done
        self.function = function
    }

    deinit {
        done(number, function.ctx)
    }

    static func == (a: HandedKey, b: HandedKey) -> Bool { a.number == b.number }

    func hash(into hasher: inout Hasher) { hasher.combine(number) }
}
