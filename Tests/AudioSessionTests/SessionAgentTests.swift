import Foundation
import SessionAgent
import Synchronization
import Testing

/// The agent's parts that need no bus: values read from GVariants, the desktop switches'
/// decisions, and the loop everything runs on.
@Suite struct SessionAgentTests {
    /// A player's PropertiesChanged as GDBus delivers it: the status is read from the
    /// dictionary, whatever the other properties hold (a title with a quote, a nested
    /// dictionary that has a `PlaybackStatus` key of its own).
    @Test func aPropertiesChangedSignalIsReadAsTypedValues() throws {
        let args = try #require(DBusValue.parse("""
            ('org.mpris.MediaPlayer2.Player', {'Metadata': <{'xesam:title': <"It's 'PlaybackStatus': <'Playing'>">, \
            'PlaybackStatus': <'Stopped'>}>, 'PlaybackStatus': <'Paused'>}, @as [])
            """))
        #expect(args[0]?.string == "org.mpris.MediaPlayer2.Player")
        let changed = try #require(args[1]?.dictionary)
        #expect(changed["PlaybackStatus"]?.string == "Paused")
        #expect(changed["Metadata"]?.dictionary?["xesam:title"]?.string == "It's 'PlaybackStatus': <'Playing'>")
        #expect(changed["Metadata"]?.dictionary?["PlaybackStatus"]?.string == "Stopped")
        #expect(args[2] == .array([]))
    }

    @Test func numbersPathsAndStructsAreRead() throws {
        #expect(DBusValue.parse("(uint32 4242,)")?[0]?.uint32 == 4242)
        #expect(DBusValue.parse("(int64 -1,)")?[0]?.uint32 == nil)
        #expect(DBusValue.parse("(uint64 5000000000,)")?[0]?.uint32 == nil)
        let display = try #require(DBusValue.parse("(<('c2', objectpath '/org/freedesktop/login1/session/c2')>,)"))
        #expect(display[0]?[1]?.string == "/org/freedesktop/login1/session/c2")
        let sessions = try #require(DBusValue.parse("([('1', objectpath '/s/1'), ('2', objectpath '/s/2')],)"))
        #expect(sessions[0]?.elements?.compactMap { $0[1]?.string } == ["/s/1", "/s/2"])
        #expect(DBusValue.parse("(<<true>>,)")?[0]?.bool == true)
        #expect(DBusValue.parse("not a value") == nil)
    }

    /// The screen lock is on when any source says so; with no source the desktop says
    /// nothing and nothing is written.
    @Test func r20TheLockIsOnWhenAnySourceSaysSo() {
        var d = DesktopState()
        #expect(d.screenLocked == nil)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (nil, nil))
        d.lock(.logind, false)
        d.lock(.screenSaver("org.gnome.ScreenSaver"), false)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (false, nil))
        d.lock(.screenSaver("org.gnome.ScreenSaver"), true)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (true, nil))
        // The screensaver went away: logind alone says unlocked.
        d.lock(.screenSaver("org.gnome.ScreenSaver"), nil)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (false, nil))
        // Every source gone: nothing written, the switch stays as it is.
        d.lock(.logind, nil)
        #expect(d.screenLocked == nil)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (nil, nil))
    }

    /// A switch is written only when the desktop's answer changes: the same answer twice
    /// (a signal repeated, a bus reconnected) writes nothing, so a switch set by hand holds.
    @Test func r20ASwitchIsWrittenOnlyWhenTheDesktopChanges() {
        var d = DesktopState()
        d.doNotDisturb(.gnomeBanners, false)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (nil, false))
        d.doNotDisturb(.notificationServer, false)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (nil, nil))
        d.doNotDisturb(.notificationServer, true)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (nil, true))
        d.doNotDisturb(.notificationServer, nil)
        d.doNotDisturb(.notificationServer, true)
        #expect(d.writes(screenLock: true, doNotDisturb: true) == (nil, nil))
    }

    /// An option turned off leaves its switch alone, whatever the desktop says.
    @Test func r20AFollowingTurnedOffWritesNothing() {
        var d = DesktopState()
        d.lock(.logind, true)
        d.doNotDisturb(.gnomeBanners, true)
        #expect(d.writes(screenLock: false, doNotDisturb: false) == (nil, nil))
        #expect(d.writes(screenLock: true, doNotDisturb: false) == (true, nil))
    }

    /// Work handed to the loop runs on its thread, in order; `sync` returns the result and
    /// runs directly when called from the loop itself; `after` runs later.
    @Test func theLoopRunsWorkInOrderOnItsThread() async {
        let loop = GLibLoop(name: "test-loop")
        defer { loop.stop() }
        let seen = Mutex<[Int]>([])
        for i in 0..<100 { loop.async { seen.withLock { $0.append(i) } } }
        #expect(loop.sync { loop.isCurrent })
        #expect(!loop.isCurrent)
        #expect(seen.withLock { $0 } == Array(0..<100))
        #expect(loop.sync { loop.sync { 7 } } == 7)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            loop.after(milliseconds: 5) { c.resume() }
        }
    }
}

extension SessionAgentTests {
    /// What another program sends is read within bounds: a huge array is cut, deep nesting stops.
    @Test func aHugeOrDeepValueIsReadWithinBounds() throws {
        let huge = "([" + (0..<5000).map { "'\($0)'" }.joined(separator: ",") + "],)"
        #expect(DBusValue.parse(huge)?[0]?.elements?.count == 1024)
        let deep = "(" + String(repeating: "<", count: 40) + "true" + String(repeating: ">", count: 40) + ",)"
        var v = try #require(DBusValue.parse(deep)?[0])
        var levels = 0
        while case .variant(let inner) = v { v = inner; levels += 1 }
        #expect(levels < 16)
        #expect(v == .other("v"))
    }
}
