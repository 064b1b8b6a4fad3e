import Testing
import PipeWireFacts
@testable import SessionPolicy

/// Memory given back after a crowd has gone: the daemon keeps the policy for as long as it
/// runs, and a thousand clients that came and went must not leave room for a thousand in
/// every table.
@Suite("Compaction")
struct CompactionTests {
    /// Each table of the model and of the index, with its room.
    static func rooms(_ p: SessionPolicy) -> [(String, Int)] {
        let m = p.snapshot(), i = p.state.index
        return [
            ("clients", m.clients.capacity), ("streams", m.streams.capacity), ("links", m.links.capacity),
            ("marks", m.marks.capacity), ("published", m.published.capacity),
            ("streamsOfClient", i.streamsOfClient.capacity), ("streamsOfProgram", i.streamsOfProgram.capacity),
            ("activityOfProgram", i.activityOfProgram.capacity), ("linksOfNode", i.linksOfNode.capacity),
            ("streamRoutes", i.streamRoutes.capacity), ("streamEndpoints", i.streamEndpoints.capacity),
            ("endpointsOfClient", i.endpointsOfClient.capacity), ("gainsOfClient", i.gainsOfClient.capacity),
            ("declaredClients", i.declaredClients.capacity), ("active", i.active.capacity),
            ("playing", i.playing.capacity), ("membership", i.membership.capacity), ("derived", i.derived.capacity),
        ]
    }

    @Test("After a thousand clients came and went, the policy's tables keep room for what is left, not for the crowd")
    func tablesShrinkAfterACrowdHasGone() {
        var p = SessionPolicy()
        _ = p.handle(.endpointAdded(N(1), kind: .sink, ["node.name": "speaker", "device.form-factor": "internal"]))
        // One that stays.
        _ = p.handle(.clientAdded(C(5), ["application.name": "stays"]))
        _ = p.handle(.streamAdded(N(5), client: C(5), direction: .output, [:]))
        for i in UInt32(100)..<1100 {
            let declared: Properties = i % 2 == 0 ? ["audio.session.category": "playback"] : [:]
            _ = p.handle(.clientAdded(C(i), declared.merging(["application.name": "crowd \(i)"]) { a, _ in a }))
            _ = p.handle(.streamAdded(N(i), client: C(i), direction: .output, ["media.role": "Music"]))
            _ = p.handle(.linkAdded(L(i), output: N(i), input: N(1)))
            _ = p.handle(.streamRunning(N(i), true))
        }
        let crowded = Self.rooms(p).filter { $0.1 >= 1000 }.map(\.0)
        #expect(Set(["clients", "streams", "links", "marks", "derived"]).isSubset(of: crowded), "the crowd filled the tables: \(crowded)")
        for i in UInt32(100)..<1100 {
            _ = p.handle(.streamRunning(N(i), false))
            _ = p.handle(.linkRemoved(L(i)))
            _ = p.handle(.streamRemoved(N(i)))
            _ = p.handle(.clientRemoved(C(i)))
        }
        let left = Self.rooms(p).filter { $0.1 > Compaction.smallestShrunk * 4 }
        #expect(left.isEmpty, "tables still sized for the crowd: \(left)")
        // What stays is intact.
        #expect(p.snapshot().clients[C(5)] != nil)
        #expect(p.snapshot().streams[N(5)] != nil)
        #expect(p.state.agreesWithRebuild())
    }
}
