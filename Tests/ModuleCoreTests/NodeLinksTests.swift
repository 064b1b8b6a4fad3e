import AudioSessionCoreABI
@testable import AudioSessionModuleCore
import SessionPolicy
import Testing

/// The graph links port by port; the policy hears of each pair of nodes once, by the
/// link it knows the pair by, through the C entry points as the module calls them.
@Suite struct NodeLinksTests {
    let effects = RecordingEffectSink()

    func moduleCore(_ p: OpaquePointer) -> ModuleCore {
        Unmanaged<ModuleCore>.fromOpaque(UnsafeRawPointer(p)).takeUnretainedValue()
    }

    /// The links the policy knows, as (link, output, input).
    func policyLinks(_ p: OpaquePointer) -> [UInt32: [UInt32]] {
        moduleCore(p).policy.snapshot().links.reduce(into: [:]) { out, e in
            out[e.key.raw] = [e.value.output.raw, e.value.input.raw]
        }
    }

    /// The outputs of the route last published in the session of stream `n` (a legacy
    /// session: its subject is the node).
    func publishedOutputs(_ n: UInt32) -> [String]? {
        let session = effects.calls.metadataWrites.last { $0.subject == n && $0.key == "audio-session.session" }?.value
        guard let route = session?["route"] as? [String: Any], let outputs = route["outputs"] as? [[String: Any]] else { return nil }
        return outputs.compactMap { $0["name"] as? String }
    }

    func graphWithMusic(_ core: OpaquePointer) {
        CProps(["media.class": "Audio/Sink", "node.name": "headphones"]).with { as_core_endpoint_added(core, 20, AS_ENDPOINT_SINK, $0) }
        CProps(["media.class": "Audio/Sink", "node.name": "speakers"]).with { as_core_endpoint_added(core, 21, AS_ENDPOINT_SINK, $0) }
        CProps(["media.role": "Music"]).with { as_core_stream_added(core, 10, 5, AS_STREAM_OUTPUT, $0) }
        CProps(["media.role": "Music"]).with { as_core_stream_added(core, 12, 6, AS_STREAM_OUTPUT, $0) }
    }

    @Test func aStereoStreamsTwoLinksReachThePolicyAsOneAndGoWithTheLast() throws {
        let core = try effects.newCore()
        defer { as_core_free(core) }
        graphWithMusic(core)
        as_core_link_added(core, 30, 10, 20)
        as_core_link_added(core, 31, 10, 20)
        #expect(policyLinks(core) == [30: [10, 20]])
        #expect(moduleCore(core).linkedNodePairs == 1)
        as_core_link_removed(core, 31)
        #expect(policyLinks(core) == [30: [10, 20]])
        as_core_link_removed(core, 30)
        #expect(policyLinks(core).isEmpty)
        #expect(moduleCore(core).nodeLinks.links.isEmpty)
        #expect(moduleCore(core).nodeLinks.pairs.isEmpty)
    }

    /// The link the policy knew the pair by goes first: the pair stays, known by the other,
    /// and the old id reused by the daemon for another pair takes nothing with it.
    @Test func thePairOutlivesTheLinkItWasKnownByAndItsReusedId() throws {
        let core = try effects.newCore()
        defer { as_core_free(core) }
        graphWithMusic(core)
        as_core_link_added(core, 30, 10, 20)
        as_core_link_added(core, 31, 10, 20)
        // Known by link 30 still: a stream's links go in the order they came.
        as_core_link_removed(core, 30)
        #expect(policyLinks(core) == [30: [10, 20]])
        as_core_link_added(core, 30, 12, 21)
        #expect(policyLinks(core) == [31: [10, 20], 30: [12, 21]])
        as_core_link_removed(core, 31)
        #expect(policyLinks(core) == [30: [12, 21]])
        #expect(moduleCore(core).nodeLinks.retired.isEmpty)
    }

    /// Whatever the daemon does with link ids (links made and removed in any order, ids
    /// reused at once), the pairs the policy knows are the graph's pairs of linked nodes,
    /// each once, and nothing is kept of pairs that went.
    @Test func theNodePairsThePolicyKnowsAreTheGraphsAfterEveryChange() throws {
        let core = try effects.newCore()
        defer { as_core_free(core) }
        graphWithMusic(core)
        var graph: [UInt32: [UInt32]] = [:]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: UInt64) -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (seed >> 33) % n
        }
        let outputs: [UInt32] = [10, 12], inputs: [UInt32] = [20, 21]
        for step in 0..<3000 {
            // Ids from a small range: the daemon hands a freed id to the next object.
            let id = UInt32(40 + next(12))
            if graph[id] != nil && next(3) > 0 {
                as_core_link_removed(core, id)
                graph[id] = nil
            } else {
                let pair = [outputs[Int(next(2))], inputs[Int(next(2))]]
                as_core_link_added(core, id, pair[0], pair[1])
                graph[id] = pair
            }
            let known = policyLinks(core)
            #expect(Set(known.values) == Set(graph.values), "step \(step)")
            #expect(known.count == Set(known.values).count, "step \(step): a pair known twice")
            if known.count != Set(graph.values).count { break }
        }
        for id in graph.keys { as_core_link_removed(core, id) }
        #expect(policyLinks(core).isEmpty)
        let links = moduleCore(core).nodeLinks
        #expect(links.pairs.isEmpty && links.links.isEmpty && links.retired.isEmpty)
    }

    /// A stream moved from one output to another: the old pair goes with its last link,
    /// the new one comes with its first; a link id added again without its removal counts
    /// as the old link gone.
    @Test func aMovedStreamAndAnIdAddedTwiceLeaveThePairsAsTheGraphHasThem() throws {
        let core = try effects.newCore()
        defer { as_core_free(core) }
        graphWithMusic(core)
        as_core_link_added(core, 30, 10, 20)
        as_core_link_added(core, 31, 10, 20)
        as_core_link_added(core, 32, 10, 21)
        as_core_link_removed(core, 30)
        as_core_link_added(core, 33, 10, 21)
        as_core_link_removed(core, 31)
        #expect(policyLinks(core) == [32: [10, 21]])
        // Id 32 again, now for the other stream: the pair 10 -> 21 still has link 33.
        as_core_link_added(core, 32, 12, 20)
        #expect(policyLinks(core) == [33: [10, 21], 32: [12, 20]])
        #expect(moduleCore(core).nodeLinks.retired.isEmpty)
        as_core_link_removed(core, 33)
        as_core_link_removed(core, 32)
        as_core_link_removed(core, 99)
        #expect(policyLinks(core).isEmpty)
        #expect(moduleCore(core).linkedNodePairs == 0)
    }

    /// What the policy does with a route is the same by one link or by all of them: the
    /// music's session is published with the headphones while either of its links stands.
    @Test func theSessionsRouteStandsWhileAnyOfItsLinksDoes() throws {
        let core = try effects.newCore()
        defer { as_core_free(core) }
        graphWithMusic(core)
        as_core_stream_running(core, 10, true)
        as_core_link_added(core, 30, 10, 20)
        as_core_link_added(core, 31, 10, 20)
        #expect(publishedOutputs(10) == ["headphones"])
        as_core_link_removed(core, 30)
        #expect(publishedOutputs(10) == ["headphones"])
        as_core_link_removed(core, 31)
        #expect(publishedOutputs(10) == [])
    }
}
