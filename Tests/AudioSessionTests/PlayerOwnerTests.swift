import Glibc
import SessionAgent
import Testing

/// Which player a stream's process belongs to (docs/mpris.md): the process itself, then its
/// nearest ancestor that owns an MPRIS name (Chromium's audio service, an Electron program).
@Suite struct PlayerOwnerTests {
    /// init (1) → systemd --user (900) → chromium (1000) → audio service (1200); mpv (2000) elsewhere.
    static let parents: [Int32: Int32] = [900: 1, 1000: 900, 1200: 1000, 1300: 1200, 2000: 900]
    static let owners: [(name: String, pid: Int32)] = [
        ("org.mpris.MediaPlayer2.chromium.instance1000", 1000), ("org.mpris.MediaPlayer2.mpv", 2000),
    ]

    static func player(_ pid: Int32, _ owners: [(name: String, pid: Int32)] = owners) -> String? {
        PlayerOwner.player(of: pid, owners: owners, parent: { parents[$0] })
    }

    @Test func aStreamPlayedByAChildProcessBelongsToItsAncestorsPlayer() {
        #expect(Self.player(1200) == "org.mpris.MediaPlayer2.chromium.instance1000")
        #expect(Self.player(1300) == "org.mpris.MediaPlayer2.chromium.instance1000")
    }

    @Test func theProcessItselfComesFirst() {
        #expect(Self.player(2000) == "org.mpris.MediaPlayer2.mpv")
        let both = Self.owners + [("org.mpris.MediaPlayer2.helper", 1200)]
        #expect(Self.player(1200, both) == "org.mpris.MediaPlayer2.helper")
    }

    @Test func noPlayerAboveTheSessionAndNoLoopIsFollowed() {
        // systemd --user owns nothing; init is never looked at.
        #expect(Self.player(900) == nil)
        #expect(PlayerOwner.player(of: 1, owners: [("org.mpris.MediaPlayer2.x", 1)], parent: { _ in nil }) == nil)
        // A process whose parent is itself, or a cycle: the walk ends.
        #expect(PlayerOwner.player(of: 5, owners: Self.owners, parent: { $0 }) == nil)
        #expect(PlayerOwner.player(of: 5, owners: Self.owners, parent: { $0 == 5 ? 6 : 5 }) == nil)
    }

    @Test func theParentIsReadAfterTheCommandWhateverItsName() {
        #expect(PlayerOwner.parentField(ofStat: "1200 (chromium) S 1000 1200 1200 0 -1") == 1000)
        #expect(PlayerOwner.parentField(ofStat: "77 (a (b) c) R 42 77 77 0") == 42)
        #expect(PlayerOwner.parentField(ofStat: "garbage") == nil)
        #expect(PlayerOwner.parentFromProc(Int32(getpid())) == Int32(getppid()))
    }
}
