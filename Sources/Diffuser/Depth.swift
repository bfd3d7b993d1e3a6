/// How deep a diffuser or a fuser may nest.
///
/// A run steps from each combinator into its children by calls on the running thread's
/// stack; an event climbs from its source through each fuser around it the same way, and
/// releasing either releases its parts the same way. A bound on the depth turns a stack
/// that would overflow (a crash with no message, in whichever thread runs, emits or
/// releases) into an error where the tree is built: the Swift combinators stop the program
/// with a message, the C API returns `DFS_ERR_ARGUMENT` and Java throws
/// `IllegalArgumentException`.
///
/// Measured with `intoAll`, the combinator that takes the most stack a level (a gate and
/// a fan-out): a tree at the bound runs and is released in about 100 KB of stack in an
/// optimized build, and within 512 KB unoptimized (a debug build of the code that
/// composes the tree, into which the combinators are inlined): inside the stacks it meets,
/// 1 MB for a JVM thread or iOS's main thread and 512 KB for a secondary thread on
/// Darwin, beside the user code it calls. UI trees nest a few tens of combinators.
extension Diffuser {
    /// The most combinators a path from a diffuser's root down to an effect may pass
    /// through, the root and the effect's own combinator included.
    @inlinable
    public static var maximumDepth: Int { 200 }

    /// The depth of the deepest of `children`, 0 if there are none: a combinator over
    /// them is one deeper.
    @usableFromInline
    static func deepest<Child>(of children: [Diffuser<Child>]) -> Int {
        var deepest = 0
        for child in children where child.depth > deepest { deepest = child.depth }
        return deepest
    }
}

extension Fuser {
    /// The most combinators a path from a fuser down to a source may pass through, the
    /// fuser and the source included (`from` is 1 deep, an `extract` over it 2).
    public static var maximumDepth: Int { Diffuser<A>.maximumDepth }

    /// Stops the program if a combinator over children whose deepest is `childDepth`
    /// deep would nest more than `maximumDepth`, and returns its depth.
    static func depth(above childDepth: Int) -> Int {
        require(
            childDepth < maximumDepth,
            "a fuser nests at most \(maximumDepth) combinators; this one would nest \(childDepth + 1)")
        return childDepth + 1
    }
}
