import Testing
@testable import SessionPolicy

/// The ids' own table hash (`IDHash`): equal ids meet, distinct ids stay apart, a client's
/// session and a legacy stream's session with the same number are two keys, and a StreamFacts
/// record changed in one copy leaves the other as it was (its names are shared until then).
@Suite("Identifier hashing and shared stream facts")
struct IdentifierHashTests {
    @Test func everyIdOfAWideRangeIsItsOwnKey() {
        var nodes = Set<NodeID>()
        var sessions = [SessionID: UInt32]()
        for raw in UInt32(0)..<20_000 {
            nodes.insert(NodeID(raw))
            sessions[.client(ClientID(raw))] = raw
            sessions[.stream(NodeID(raw))] = raw &+ 1_000_000
        }
        // Ids near the top of the range, where a weak mix of the high bits would collide.
        for raw in UInt32.max - 1_000...UInt32.max { nodes.insert(NodeID(raw)) }
        #expect(nodes.count == 21_001)
        #expect(sessions.count == 40_000)
        #expect(sessions[.client(ClientID(7))] == 7)
        #expect(sessions[.stream(NodeID(7))] == 1_000_007)
        for raw in UInt32(0)..<20_000 where raw % 2 == 0 { sessions[.stream(NodeID(raw))] = nil }
        #expect(sessions.count == 30_000)
        #expect(sessions[.stream(NodeID(8))] == nil)
        #expect(sessions[.stream(NodeID(9))] == 1_000_009)
        #expect(sessions[.client(ClientID(8))] == 8)
    }

    @Test func theMixSpreadsSmallIdsOverTheTable() {
        // 64 consecutive ids in a table of 128 buckets: a mix that kept the ids' order would
        // put them in 64 neighbouring buckets; a spread one leaves at most a few in one eighth.
        var perEighth = [Int](repeating: 0, count: 8)
        for raw in UInt64(1)...64 {
            let bucket = IDHash.mix(raw, seed: 12_345) & 127
            perEighth[bucket / 16] += 1
        }
        #expect(perEighth.allSatisfy { $0 < 24 })
        #expect(IDHash.mix(5, seed: 1) != IDHash.mix(5, seed: 2))
    }

    @Test func aChangedCopyOfStreamFactsLeavesTheOriginal() {
        let original = StreamFacts(applicationName: "player", role: MediaRole(rawValue: "Music"), linkGroup: nil)
        var copy = original
        copy.applicationName = "other"
        copy.role = MediaRole(rawValue: "Phone")
        #expect(original.applicationName == "player")
        #expect(original.role == MediaRole(rawValue: "Music"))
        #expect(copy.applicationName == "other")
        #expect(copy != original)
        var same = original
        same.applicationName = "player"
        #expect(same == original)
    }
}
