import Testing
@testable import SessionPolicy

/// The scratch set of one event (`SessionScratch`): whatever mix of inserts, removals and
/// clears it sees, it holds what a `Set` would, whether the sessions fit inline or overflow.
@Suite("The per-event set of sessions")
struct SessionScratchTests {
    /// Its contents against a `Set`'s: membership, count, iteration (each session once),
    /// sorting, union and the session `any` names.
    func expectSame(_ scratch: SessionScratch, _ set: Set<SessionID>, _ universe: [SessionID]) {
        #expect(scratch.count == set.count)
        #expect(scratch.isEmpty == set.isEmpty)
        #expect(Array(scratch).count == set.count)
        #expect(Set(scratch) == set)
        #expect(scratch.sorted() == set.sorted())
        for s in universe { #expect(scratch.contains(s) == set.contains(s)) }
        if let any = scratch.any { #expect(set.contains(any)) } else { #expect(set.isEmpty) }
        let other: Set<SessionID> = [.client(ClientID(3)), .stream(NodeID(900))]
        #expect(scratch.union(other) == set.union(other))
    }

    @Test func aLongMixOfChangesHoldsWhatASetWould() {
        let universe = (0..<6).map { SessionID.client(ClientID(UInt32($0))) } + (0..<6).map { SessionID.stream(NodeID(UInt32($0))) }
        var scratch = SessionScratch()
        var set = Set<SessionID>()
        var seed: UInt64 = 0x5eed
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        var largest = 0
        for _ in 0..<5_000 {
            let s = universe[next(universe.count)]
            switch next(20) {
            case 0:
                scratch.removeAll()
                set.removeAll()
            case 1...7:
                scratch.remove(s)
                set.remove(s)
            default:
                scratch.insert(s)
                set.insert(s)
            }
            largest = max(largest, set.count)
            expectSame(scratch, set, universe)
        }
        // The mix reached past the two sessions held inline.
        #expect(largest > 4)
    }

    @Test func aSessionRemovedFromTheMiddleLeavesTheOthers() {
        let a = SessionID.client(ClientID(1)), b = SessionID.stream(NodeID(2)), c = SessionID.stream(NodeID(3))
        var scratch = SessionScratch()
        scratch.insert(a)
        scratch.insert(b)
        scratch.insert(c)
        scratch.insert(b)
        #expect(scratch.count == 3)
        scratch.remove(a)
        #expect(scratch.sorted() == [b, c].sorted())
        // The freed inline place takes the next session; the one in the overflow stays once.
        scratch.insert(c)
        scratch.insert(a)
        #expect(scratch.count == 3)
        #expect(Set(scratch) == [a, b, c])
        scratch.removeAll()
        #expect(scratch.isEmpty && scratch.any == nil)
    }
}
