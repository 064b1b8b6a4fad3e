// swift-tools-version: 6.1
// Audio sessions for PipeWire: Apple's audio-session model as a PipeWire policy.
import PackageDescription

// The code that runs inside the PipeWire daemon is compiled one function to a section, so
// that the module's link (meson-shim) can lay the functions a decision runs side by side
// (meson-shim/hot-symbols.txt): the daemon runs a decision on cold caches, and fewer
// pages of code per event cost it less.
//
// Swift's merge-functions pass is off for it (`-swiftmergefunc-threshold=0`): the pass makes
// one function of several similar ones, taking their differences as arguments, and a
// merged copy or destroy of a record goes through the runtime's generic value witnesses,
// with the type's metadata, where each had its own few instructions. A pause/resume
// decision runs through 219 lines of code instead of 248 (scripts/footprint.py).
let daemonCode: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-function-sections", "-Xllvm", "-swiftmergefunc-threshold=0"])
]

let package = Package(
    name: "pipewire-audio-session",
    products: [
        // The policy and the Swift side of the module, as one static archive that
        // meson-shim links (with the Swift standard library, statically) into
        // libpipewire-module-audio-session.so.
        .library(name: "AudioSessionModuleCore", type: .static, targets: ["AudioSessionModuleCore"]),
        .library(name: "AudioSession", targets: ["AudioSession"]),
        // libaudiosession's code (the C API over AudioSession), as one static archive that
        // meson-shim links, with the Swift runtime, into libaudiosession.so.0.
        .library(name: "AudioSessionC", type: .static, targets: ["AudioSessionC"]),
        .executable(name: "pw-session", targets: ["pw-session"]),
        .executable(name: "session-policy-bench", targets: ["session-policy-bench"]),
        .executable(name: "audio-session-bench", targets: ["audio-session-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // Apple's audio-session rules as a pure state machine. Standard library only:
        // it is loaded into the PipeWire daemon.
        .target(name: "SessionPolicy", dependencies: ["AudioSessionVocabulary"], swiftSettings: daemonCode),
        // The words applications and the policy share: category, mode, options, ports,
        // routes, notifications, errors and the declaration's property keys.
        .target(name: "AudioSessionVocabulary", swiftSettings: daemonCode),
        // A sink's or source's port read from PipeWire's properties: shared by the translation
        // and by the clients (the library, pw-session), which describe routes the same way.
        .target(name: "PipeWirePorts", dependencies: ["AudioSessionVocabulary"], swiftSettings: daemonCode),
        // The translation layer: PipeWire's property sets read as the policy's typed facts
        // and events. The one place that knows PipeWire's property names.
        .target(name: "PipeWireFacts", dependencies: ["SessionPolicy", "PipeWirePorts"], swiftSettings: daemonCode),

        // libpipewire-0.3 headers and link flags, from pkg-config.
        .systemLibrary(
            name: "CPipeWire",
            pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev", "libspa-0.2-dev"])]
        ),
        // Macros, variadic and static-inline PipeWire/SPA calls as real, prefixed functions.
        .target(name: "CPipeWireShim", dependencies: ["CPipeWire"]),

        // The one C header between the module (Modules/) and the Swift core.
        .target(name: "AudioSessionCoreABI"),
        // The Swift side of the module: @_cdecl entry points over SessionPolicy.
        .target(name: "AudioSessionModuleCore", dependencies: ["SessionPolicy", "PipeWireFacts", "AudioSessionCoreABI"], swiftSettings: daemonCode),

        // The headless PipeWire sandbox (pw-session sandbox, the integration tests, make bench).
        .target(name: "Sandbox"),
        // What a hostile client sends, for the integration tests and make bench only: no
        // product depends on it.
        .target(name: "HostileClients"),

        // The AVAudioSession-like client library for applications.
        .target(name: "AudioSession", dependencies: ["CPipeWireShim", "AudioSessionVocabulary", "PipeWirePorts"]),
        // GIO (GLib): GDBus for the session and system buses, GSettings for the desktop's settings.
        .systemLibrary(
            name: "CGIO",
            pkgConfig: "gio-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        // The C API's header (include/audio-session/audio-session.h), installed with libaudiosession.
        .target(name: "CAudioSessionAPI"),
        // The C API: @_cdecl as_* functions over AudioSession.
        .target(name: "AudioSessionC", dependencies: ["AudioSession", "CAudioSessionAPI"]),
        // pw-session agent: the user's desktop session carried to the policy (MPRIS players
        // paused and resumed with its pauses; the screen lock and Do Not Disturb as its switches).
        .target(name: "SessionAgent", dependencies: ["AudioSession", "CGIO"]),
        .executableTarget(
            name: "pw-session",
            dependencies: [
                "AudioSession",
                "SessionAgent",
                "PipeWirePorts",
                "Sandbox",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "session-policy-bench",
            dependencies: ["SessionPolicy", "PipeWireFacts", "AudioSessionModuleCore", "AudioSessionCoreABI"],
            // Linked by LLVM's linker with its relocations kept: the module's build
            // (meson-shim/lay-out-module.sh) instruments it with llvm-bolt to learn which
            // paths of the daemon's code a decision takes.
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "--emit-relocs"])]
        ),

        // make bench: the daemon-level measurements, module vs stock WirePlumber.
        .executableTarget(
            name: "audio-session-bench",
            dependencies: [
                "Sandbox", "HostileClients", "AudioSession", "SessionPolicy", "PipeWireFacts",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        .testTarget(
            name: "SessionPolicyTests",
            dependencies: [
                "SessionPolicy",
                "PipeWireFacts",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "ModuleCoreTests", dependencies: ["AudioSessionModuleCore", "AudioSessionCoreABI", "SessionPolicy", "PipeWireFacts", "AudioSession"]),
        .testTarget(name: "AudioSessionTests", dependencies: ["AudioSession", "SessionPolicy", "PipeWireFacts", "SessionAgent", "AudioSessionC", "CAudioSessionAPI"]),
        .testTarget(name: "IntegrationTests", dependencies: ["Sandbox", "HostileClients", "SessionPolicy", "PipeWireFacts", "AudioSession", "SessionAgent"]),
    ]
)
