// The keyed list diff: pairs the items of two lists by key and finds the fewest moves for
// that pairing.
//
// 1. Trim the common prefix and suffix: items with equal keys at the same places from
//    either end pair in place (an unchanged list is done here, without hashing).
// 2. Hash the keys of the middle once into one open-addressing table. Each old key's
//    occurrences form an ascending chain (one flat array of "next" links), so the k-th
//    new occurrence of a key takes the k-th old one.
// 3. Matched items stay unless they are outside a longest increasing subsequence of old
//    indices taken in new order (patience sorting, O(k log k) for k matched items; skipped
//    when the matched items kept their order).
//
// Expected O(n + m) plus O(k log k), with a fixed number of allocations per diff: flat
// buffers, never one per element.
//
// One file although over 400 lines: the three steps hand each other the index maps
// and buffers laid out here, and each relies on what the one before it left there.

extension ListDiff {
    /// Diffs two lists whose items are identified by `key`, with content compared by
    /// `sameContent`.
    ///
    /// `sameContent(old, new)` is called once for every matched pair (same key); `false`
    /// makes the pair an update. `key` is called at most twice per item. Either may throw;
    /// the error comes back from this initializer.
    ///
    /// ```swift
    /// let diff = ListDiff(from: oldRows, to: newRows, key: \.id, sameContent: ==)
    /// ```
    @inlinable @inline(__always)
    public init<Element, Key: Hashable>(
        from old: [Element], to new: [Element],
        key: (Element) throws -> Key,
        sameContent: (Element, Element) throws -> Bool
    ) rethrows {
        self = try old.withUnsafeBufferPointer { old in
            try new.withUnsafeBufferPointer { new in
                try ListDiff(
                    oldCount: old.count, newCount: new.count,
                    oldKey: { try key(old[$0]) }, newKey: { try key(new[$0]) },
                    sameContent: { try sameContent(old[$0], new[$1]) }
                )
            }
        }
    }

    /// Diffs two lists whose items are identified by `key`, with content compared by `==`.
    @inlinable @inline(__always)
    public init<Element: Equatable, Key: Hashable>(
        from old: [Element], to new: [Element], key: (Element) throws -> Key
    ) rethrows {
        try self.init(from: old, to: new, key: key, sameContent: ==)
    }

    /// Diffs two lists of `Identifiable` items: keyed by `id`, content compared by `==`.
    @inlinable @inline(__always)
    public init<Element: Identifiable & Equatable>(from old: [Element], to new: [Element]) {
        self.init(from: old, to: new, key: { $0.id }, sameContent: ==)
    }

    /// Diffs two lists of keys: pairs, deletes, inserts and moves, never updates.
    @inlinable @inline(__always)
    public init<Key: Hashable>(keys old: [Key], _ new: [Key]) {
        self.init(from: old, to: new, key: { $0 }, sameContent: { _, _ in true })
    }

    /// Diffs two lists given by their counts and by functions of an index: the form for
    /// bindings and for storage that is not an array.
    ///
    /// `oldKey(i)` and `newKey(j)` give the keys of old item `i` and new item `j`;
    /// `sameContent(i, j)` compares the contents of a matched pair. Each is called at most
    /// twice per index (keys) or once per matched pair (content); a throw aborts the diff
    /// and comes back from this initializer. A negative count, or one of `Int32.max` or
    /// more, stops the program with a message.
    @inlinable @inline(__always)
    public init<Key: Hashable>(
        oldCount: Int, newCount: Int,
        oldKey: (_ oldIndex: Int) throws -> Key,
        newKey: (_ newIndex: Int) throws -> Key,
        sameContent: (_ oldIndex: Int, _ newIndex: Int) throws -> Bool
    ) rethrows {
        try self.init(
            oldCount: oldCount, newCount: newCount, oldKey: oldKey, newKey: newKey,
            sameKey: { $0 == $1 }, sameContent: sameContent)
    }

    /// `init(oldCount:newCount:oldKey:newKey:sameContent:)` with keys compared by
    /// `sameKey` instead of `==`: for keys whose equality can fail, or that are only
    /// hashes of what identifies an item (a binding's key objects, compared in their own
    /// language).
    ///
    /// `sameKey` must be an equivalence that agrees with the keys' hashes (keys it calls
    /// the same hash alike). It is called as `sameKey(earlier, later)`, for an old key and
    /// a new one, or for two keys of one list while looking for duplicates: at each place
    /// of the common prefix and suffix, then for keys whose hashes meet in the table. A
    /// throw aborts the diff and comes back from this initializer, like one from the
    /// other functions.
    @inlinable @inline(__always)
    public init<Key: Hashable>(
        oldCount: Int, newCount: Int,
        oldKey: (_ oldIndex: Int) throws -> Key,
        newKey: (_ newIndex: Int) throws -> Key,
        sameKey: (Key, Key) throws -> Bool,
        sameContent: (_ oldIndex: Int, _ newIndex: Int) throws -> Bool
    ) rethrows {
        require(oldCount >= 0 && newCount >= 0, "ListDiff: negative count")
        require(oldCount < Int(Int32.max) && newCount < Int(Int32.max), "ListDiff: list too long")
        var oldToNew = [Int](repeating: -1, count: oldCount)
        var newToOld = [Int](repeating: -1, count: newCount)
        let parts = try oldToNew.withUnsafeMutableBufferPointer { o2n in
            try newToOld.withUnsafeMutableBufferPointer { n2o in
                try _ListDiffing.pair(
                    o2n, n2o, oldKey: oldKey, newKey: newKey, sameKey: sameKey, sameContent: sameContent)
            }
        }
        self.init(
            oldCount: oldCount, newCount: newCount,
            deletes: parts.deletes, inserts: parts.inserts, moves: parts.moves,
            updates: parts.updates, oldToNew: oldToNew, newToOld: newToOld,
            hasDuplicates: parts.hasDuplicates)
    }
}

/// One slot of the open-addressing table, 8 bytes: the high half of the key's hash (a tag
/// that rejects most other keys without loading them), and a reference:
/// - `i >= 0`: the key's next unpaired old occurrence (an offset into the old middle,
///   whose key is `oldKeys[i]`);
/// - `~j < 0`: no unpaired old occurrence is left; `newKeys[j]` holds the key (a new
///   occurrence already seen), so one more new occurrence is a duplicate;
/// - `Int32.min`: an empty slot.
@usableFromInline
struct _ListSlot {
    @usableFromInline var tag: UInt32
    @usableFromInline var ref: Int32

    @inlinable
    init(tag: UInt32, ref: Int32) {
        self.tag = tag
        self.ref = ref
    }

    @usableFromInline
    static let empty = Int32.min
}

/// The parts of a diff besides the index maps.
@usableFromInline
struct _ListDiffParts {
    @usableFromInline var deletes: [Int] = []
    @usableFromInline var inserts: [Int] = []
    @usableFromInline var moves: [ListDiff.Pair] = []
    @usableFromInline var updates: [ListDiff.Pair] = []
    @usableFromInline var hasDuplicates = false

    @inlinable
    init() {}
}

@usableFromInline
enum _ListDiffing {
    /// Fills `o2n` and `n2o` (preset to -1) and returns the other parts of the diff.
    @inlinable @inline(__always)
    static func pair<Key: Hashable>(
        _ o2n: UnsafeMutableBufferPointer<Int>,
        _ n2o: UnsafeMutableBufferPointer<Int>,
        oldKey: (Int) throws -> Key,
        newKey: (Int) throws -> Key,
        sameKey: (Key, Key) throws -> Bool,
        sameContent: (Int, Int) throws -> Bool
    ) rethrows -> _ListDiffParts {
        let n = o2n.count
        let m = n2o.count
        var parts = _ListDiffParts()

        // 1. Common prefix and suffix. The keys at the place where the prefix ends are kept:
        // the suffix may reach that place in one list, and must not ask for its key again
        // (the middle asks once more, and a key is asked at most twice).
        let limit = Swift.min(n, m)
        var p = 0
        var prefixEnd: (old: Key, new: Key)?
        while p < limit {
            let oldK = try oldKey(p)
            let newK = try newKey(p)
            if try !sameKey(oldK, newK) {
                prefixEnd = (oldK, newK)
                break
            }
            o2n[p] = p
            n2o[p] = p
            if try !sameContent(p, p) { parts.updates.append(ListDiff.Pair(old: p, new: p)) }
            p += 1
        }
        var s = 0
        var suffixUpdates: [ListDiff.Pair] = []
        while s < limit - p {
            let i = n - 1 - s
            let j = m - 1 - s
            // p < limit here, so the prefix ended at p and `prefixEnd` holds its keys.
            let oldK = i == p ? prefixEnd!.old : try oldKey(i)
            let newK = j == p ? prefixEnd!.new : try newKey(j)
            if try !sameKey(oldK, newK) { break }
            o2n[i] = j
            n2o[j] = i
            if try !sameContent(i, j) { suffixUpdates.append(ListDiff.Pair(old: i, new: j)) }
            s += 1
        }
        let oldMid = n - p - s
        let newMid = m - p - s

        if oldMid == 0 || newMid == 0 {
            // Only deletes or only inserts in the middle: nothing to hash.
            if oldMid > 0 { parts.deletes = Array(p..<(p + oldMid)) }
            if newMid > 0 { parts.inserts = Array(p..<(p + newMid)) }
        } else {
            try middle(
                o2n, n2o, p: p, oldMid: oldMid, newMid: newMid,
                oldKey: oldKey, newKey: newKey, sameKey: sameKey, sameContent: sameContent, into: &parts)
        }
        if !suffixUpdates.isEmpty { parts.updates.append(contentsOf: suffixUpdates.reversed()) }
        return parts
    }

    /// Pairs the middle parts `p..<p+oldMid` of the old list and `p..<p+newMid` of the new
    /// one through one hash table, then finds the moves.
    @inlinable @inline(__always)
    static func middle<Key: Hashable>(
        _ o2n: UnsafeMutableBufferPointer<Int>,
        _ n2o: UnsafeMutableBufferPointer<Int>,
        p: Int, oldMid: Int, newMid: Int,
        oldKey: (Int) throws -> Key,
        newKey: (Int) throws -> Key,
        sameKey: (Key, Key) throws -> Bool,
        sameContent: (Int, Int) throws -> Bool,
        into parts: inout _ListDiffParts
    ) rethrows {
        // The keys of the middle, computed once.
        let oldKeys = UnsafeMutablePointer<Key>.allocate(capacity: oldMid)
        let newKeys = UnsafeMutablePointer<Key>.allocate(capacity: newMid)
        var oldKeyCount = 0
        var newKeyCount = 0
        defer {
            oldKeys.deinitialize(count: oldKeyCount)
            oldKeys.deallocate()
            newKeys.deinitialize(count: newKeyCount)
            newKeys.deallocate()
        }
        while oldKeyCount < oldMid {
            (oldKeys + oldKeyCount).initialize(to: try oldKey(p + oldKeyCount))
            oldKeyCount += 1
        }
        while newKeyCount < newMid {
            (newKeys + newKeyCount).initialize(to: try newKey(p + newKeyCount))
            newKeyCount += 1
        }

        // The hashes, in a pass of their own: the probes below then depend on nothing but
        // memory, so that the processor overlaps the cache misses of several of them.
        let oldHashes = UnsafeMutablePointer<Int>.allocate(capacity: oldMid)
        let newHashes = UnsafeMutablePointer<Int>.allocate(capacity: newMid)
        defer {
            oldHashes.deallocate()
            newHashes.deallocate()
        }
        for i in 0..<oldMid { oldHashes[i] = oldKeys[i].hashValue }
        for j in 0..<newMid { newHashes[j] = newKeys[j].hashValue }

        // The table: at most one slot per distinct key, load at most 2/3.
        let total = oldMid + newMid
        var capacity = 16
        while capacity < total + total / 2 { capacity &<<= 1 }
        let mask = capacity - 1
        let slots = UnsafeMutablePointer<_ListSlot>.allocate(capacity: capacity)
        slots.initialize(repeating: _ListSlot(tag: 0, ref: _ListSlot.empty), count: capacity)
        // next[i]: the next old occurrence (middle offset) of old item i's key, or -1.
        let next = UnsafeMutablePointer<Int32>.allocate(capacity: oldMid)
        defer {
            slots.deallocate()
            next.deallocate()
        }

        var duplicates = false
        // Old keys, last to first, so that each chain is ascending from the slot's head (and
        // `sameKey` gets the earlier key first: every key in the table comes after `i`).
        var i = oldMid - 1
        while i >= 0 {
            let h = oldHashes[i]
            let tag = UInt32(truncatingIfNeeded: h >> 32)
            var slot = h & mask
            while true {
                let entry = slots[slot]
                if entry.ref == _ListSlot.empty {
                    slots[slot] = _ListSlot(tag: tag, ref: Int32(truncatingIfNeeded: i))
                    next[i] = -1
                    break
                }
                if try entry.tag == tag && sameKey(oldKeys[i], oldKeys[Int(entry.ref)]) {
                    next[i] = entry.ref
                    slots[slot].ref = Int32(truncatingIfNeeded: i)
                    duplicates = true
                    break
                }
                slot = (slot &+ 1) & mask
            }
            i -= 1
        }

        // New keys, first to last: each takes the first unpaired old occurrence.
        var matched = 0
        var ordered = true
        var lastOld = -1
        for j in 0..<newMid {
            let h = newHashes[j]
            let tag = UInt32(truncatingIfNeeded: h >> 32)
            var slot = h & mask
            while true {
                let entry = slots[slot]
                let ref = Int(entry.ref)
                if entry.ref == _ListSlot.empty {
                    slots[slot] = _ListSlot(tag: tag, ref: ~Int32(truncatingIfNeeded: j))
                    break
                }
                if entry.tag == tag {
                    if ref >= 0 {
                        if try sameKey(oldKeys[ref], newKeys[j]) {
                            let following = next[ref]
                            slots[slot].ref = following >= 0 ? following : ~Int32(truncatingIfNeeded: j)
                            let oi = p + ref
                            let nj = p + j
                            o2n[oi] = nj
                            n2o[nj] = oi
                            matched += 1
                            if oi < lastOld { ordered = false }
                            lastOld = oi
                            if try !sameContent(oi, nj) { parts.updates.append(ListDiff.Pair(old: oi, new: nj)) }
                            break
                        }
                    } else if try sameKey(newKeys[~ref], newKeys[j]) {
                        // Every old occurrence is taken: a second new occurrence.
                        duplicates = true
                        break
                    }
                }
                slot = (slot &+ 1) & mask
            }
        }
        parts.hasDuplicates = duplicates

        if matched < oldMid {
            parts.deletes.reserveCapacity(oldMid - matched)
            for i in p..<(p + oldMid) where o2n[i] < 0 { parts.deletes.append(i) }
        }
        if matched < newMid {
            parts.inserts.reserveCapacity(newMid - matched)
            for j in p..<(p + newMid) where n2o[j] < 0 { parts.inserts.append(j) }
        }
        if !ordered {
            parts.moves = movesOutsideLIS(n2o, from: p, count: newMid, matched: matched)
        }
    }

    /// The matched items of `n2o[start..<start+count]` outside one longest increasing
    /// subsequence of their old indices, ascending by new index. O(k log k).
    @usableFromInline
    static func movesOutsideLIS(
        _ n2o: UnsafeMutableBufferPointer<Int>, from start: Int, count: Int, matched: Int
    ) -> [ListDiff.Pair] {
        // Patience sorting: tails[t] is the new index ending the best increasing run of
        // length t + 1 found so far, tailOld[t] its old index; pred links runs backwards.
        let tails = UnsafeMutablePointer<Int32>.allocate(capacity: matched)
        let tailOld = UnsafeMutablePointer<Int>.allocate(capacity: matched)
        let pred = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        let stays = UnsafeMutablePointer<Bool>.allocate(capacity: count)
        defer {
            tails.deallocate()
            tailOld.deallocate()
            pred.deallocate()
            stays.deallocate()
        }
        var length = 0
        for j in 0..<count {
            let v = n2o[start + j]
            if v < 0 { continue }
            var lo: Int
            if length == 0 || tailOld[length - 1] < v {
                lo = length
            } else {
                lo = 0
                var hi = length - 1
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if tailOld[mid] < v { lo = mid + 1 } else { hi = mid }
                }
            }
            pred[j] = lo > 0 ? tails[lo - 1] : -1
            tails[lo] = Int32(truncatingIfNeeded: j)
            tailOld[lo] = v
            if lo == length { length += 1 }
        }
        stays.initialize(repeating: false, count: count)
        var t = length > 0 ? Int(tails[length - 1]) : -1
        while t >= 0 {
            stays[t] = true
            t = Int(pred[t])
        }
        var moves: [ListDiff.Pair] = []
        moves.reserveCapacity(matched - length)
        for j in 0..<count {
            let v = n2o[start + j]
            if v >= 0 && !stays[j] { moves.append(ListDiff.Pair(old: v, new: start + j)) }
        }
        return moves
    }
}
