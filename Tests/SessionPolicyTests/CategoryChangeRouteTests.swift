import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Category change and the route (R5)")
struct CategoryChangeRouteTests {
    @Test("R5 after a category change the next route change is reported with reason categoryChange, once")
    func r5TheNextRouteChangeAfterACategoryChangeHasReasonCategoryChangeOnce() {
        var w = World()
        w.sink(50, speakerProps)
        w.sink(60, headphonesProps)
        w.declared(1, "playback")
        w.stream(10, client: 1)
        w.link(100, 10, 50)
        _ = w.activate(1)
        // The category changes; nothing moves yet: no route change.
        #expect(w.set(1, ["audio.session.category": "playAndRecord"]).allSatisfy {
            if case .notify(_, .routeChange) = $0 { return false } else { return true }
        })
        // The session manager moves the stream: unlinked (nothing said), then linked elsewhere.
        #expect(w.decide(.linkRemoved(L(100))) == [])
        let previous = Route(outputs: [speakerPort])
        let current = Route(outputs: [headphonesPort])
        #expect(w.decide(.linkAdded(L(101), output: N(10), input: N(60)))
                == [.notify(clientS(1), .routeChange(reason: .categoryChange, previous: previous, current: current))])
        // Reported once: a later move says nothing more.
        #expect(w.decide(.linkRemoved(L(101)), .linkAdded(L(102), output: N(10), input: N(50))) == [])
    }
}
