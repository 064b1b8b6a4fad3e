@testable import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// What the module remembers of its writes gives back its room after a crowd has gone.
@Suite struct WrittenCompactionTests {
    @Test func afterAThousandPublishedSessionsWentWhatWasWrittenKeepsRoomForWhatIsLeft() {
        // The module's timers and an interval between events: every decision writes.
        let sink = TimingEffectSink()
        let clock = TestClock()
        var c = PolicyConfiguration()
        c.publishIntervalMilliseconds = 20
        let core = ModuleCore(configuration: c, effects: sink, clock: { clock.nanoseconds })
        for i in UInt32(100)..<1100 {
            clock.advance(milliseconds: 25)
            core.handle(.clientAdded(ClientID(i), ["audio.session.category": "playback", "application.name": "crowd \(i)"]))
        }
        #expect(core.written.count >= 1000)
        for i in UInt32(100)..<1100 {
            clock.advance(milliseconds: 25)
            core.handle(.clientRemoved(ClientID(i)))
        }
        // Every session's key was removed from the metadata, and the table sized again.
        #expect(core.written.count <= 1)
        #expect(core.written.capacity <= 256, "room for \(core.written.capacity)")
        #expect(core.heldKeys.capacity <= 256)
    }
}
