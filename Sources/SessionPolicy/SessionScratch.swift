/// A set of sessions in the scratch of one event (`PolicyStep.touched`, `justActivated`).
/// Most events touch one session or two: those are held inline, with nothing to hash, to
/// clear or to check for uniqueness, and the event reads no table for them (in the daemon
/// every table is one more cache line or page to fetch). An event that reaches more sessions
/// (a fan-out) keeps the rest in a set. The order of iteration is unspecified, as a set's.
struct SessionScratch: Sequence {
    private var first: SessionID?
    private var second: SessionID?
    /// The sessions beyond the two inline ones.
    private var more: Set<SessionID> = []

    var isEmpty: Bool { first == nil && second == nil && more.isEmpty }

    var count: Int { (first == nil ? 0 : 1) + (second == nil ? 0 : 1) + more.count }

    /// One of the sessions, nil when there is none.
    var any: SessionID? { first ?? second ?? more.first }

    func contains(_ s: SessionID) -> Bool {
        first == s || second == s || (!more.isEmpty && more.contains(s))
    }

    mutating func insert(_ s: SessionID) {
        if contains(s) { return }
        if first == nil {
            first = s
        } else if second == nil {
            second = s
        } else {
            more.insert(s)
        }
    }

    mutating func remove(_ s: SessionID) {
        if first == s {
            first = nil
        } else if second == s {
            second = nil
        } else if !more.isEmpty {
            more.remove(s)
        }
    }

    /// Room for `n` sessions without growing (a fan-out about to insert them).
    mutating func reserveCapacity(_ n: Int) {
        if n > 2 { more.reserveCapacity(n - 2) }
    }

    /// Empties it; the set of a fan-out keeps its storage unless it grew large.
    mutating func removeAll() {
        first = nil
        second = nil
        if more.isEmpty { return }
        if more.capacity > 64 { more = [] } else { more.removeAll(keepingCapacity: true) }
    }

    /// Its sessions with those of `other`.
    func union(_ other: Set<SessionID>) -> Set<SessionID> {
        var all = other
        for s in self { all.insert(s) }
        return all
    }

    struct Iterator: IteratorProtocol {
        var first: SessionID?
        var second: SessionID?
        var more: Set<SessionID>.Iterator

        mutating func next() -> SessionID? {
            if let s = first {
                first = nil
                return s
            }
            if let s = second {
                second = nil
                return s
            }
            return more.next()
        }
    }

    func makeIterator() -> Iterator {
        Iterator(first: first, second: second, more: more.makeIterator())
    }

    var underestimatedCount: Int { count }
}
