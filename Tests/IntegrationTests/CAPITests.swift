import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// libaudiosession, the C API, as a C or Python programmer meets it: the header and
    /// pkg-config file only, the example player (examples/c-player.c) built with `cc` and
    /// run in the sandbox (a call pauses it and it plays again after; lost headphones stop
    /// it), the exported symbols and soname, and the Python ctypes example.
    @Suite(.serialized)
    struct CAPITests {
        /// Where meson built libaudiosession: `AUDIO_SESSION_CLIENT_BUILD_DIR` when the module's
        /// build has no clients (the PipeWire 1.6 generation, whose libraries this machine
        /// cannot link programs against), else the module's build directory (the one the
        /// integration tests load the module from).
        static func buildDirectory() throws -> String {
            let env = ProcessInfo.processInfo.environment
            let dir = env["AUDIO_SESSION_CLIENT_BUILD_DIR"] ?? env["AUDIO_SESSION_MODULE_DIR"] ?? Support.checkoutRoot + "/build/meson"
            guard FileManager.default.fileExists(atPath: dir + "/libaudiosession.so.0") else {
                throw TestFailure("no libaudiosession.so.0 in \(dir): build it with make module")
            }
            return dir
        }

        /// The build's uninstalled pkg-config file first, as a program built against an
        /// installed libaudiosession would use the installed one.
        static func environment() throws -> [String: String] {
            let dir = try buildDirectory()
            return ["PKG_CONFIG_PATH": dir + "/meson-uninstalled", "LD_LIBRARY_PATH": dir + ":" + (ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"] ?? "")]
        }

        /// This process's environment with `environment()`'s (for programs run outside the sandbox).
        static func outsideEnvironment() throws -> [String: String] {
            ProcessInfo.processInfo.environment.merging(try environment()) { $1 }
        }

        /// Compiles `source` into `output` with `compiler` and `flags` and nothing else but what
        /// `pkg-config --cflags --libs audio-session` says (`extra` comes after it).
        static func compile(_ compiler: String, _ flags: String, _ source: String, _ output: String, extra: String = "",
                            in dir: String) throws -> (status: Int32, stdout: String, stderr: String) {
            try Support.runOutside(["sh", "-c", "\(compiler) \(flags) \"$1\" $(pkg-config --cflags --libs audio-session) \(extra) -o \"$2\"",
                                    "sh", source, output], environment: try outsideEnvironment(), in: dir)
        }

        /// Builds the example with `cc` and nothing but what pkg-config says.
        static func buildPlayer(in dir: String) throws -> String {
            let out = dir + "/c-player"
            let r = try compile("cc", "-std=c99 -Wall -Wextra -Werror", Support.checkoutRoot + "/examples/c-player.c", out, extra: "-lm", in: dir)
            guard r.status == 0 else { throw TestFailure("building the C example failed: \(r.stdout)\(r.stderr)") }
            return out
        }

        /// What the program printed, in order, without the lines libpipewire logs into the same
        /// output (`[W][…] …`: a warning may come before the program's first line).
        static func lines(_ p: ChildProcess) -> [String] {
            Client.log(p).split(separator: "\n").map(String.init).filter { !isPipeWireLogLine($0) }
        }

        static func isPipeWireLogLine(_ line: String) -> Bool {
            let c = Array(line.utf8.prefix(4))
            return c.count == 4 && c[0] == UInt8(ascii: "[") && c[2] == UInt8(ascii: "]") && c[3] == UInt8(ascii: "[")
        }

        static func waitForLine(_ p: ChildProcess, _ line: String, _ sandbox: Sandbox, timeout: TimeInterval = 15) throws {
            do {
                try sandbox.waitUntil(timeout: timeout, "the program to print \"\(line)\"") {
                    if lines(p).contains(line) { return true }
                    if let status = p.exitStatus { throw TestFailure("it exited (\(status)) first") }
                    return false
                }
            } catch {
                throw TestFailure("\(error)\nits output:\n\(Client.log(p))")
            }
        }

        /// The header compiles as C99 (the example, with -Werror) and as C++; pkg-config
        /// knows the library; only the as_* functions are exported, under the soname.
        @Test func theHeaderAndPkgConfigAreAllAProgramNeeds() throws {
            let tmp = try Support.makeTemp("capi")
            defer { Support.removeTemp(tmp) }
            _ = try Self.buildPlayer(in: tmp)
            let cxx = tmp + "/check.cc"
            try "#include <audio-session/audio-session.h>\nint main() { as_session *s = as_session_new(nullptr); as_session_free(s); return 0; }\n"
                .write(toFile: cxx, atomically: true, encoding: .utf8)
            let r = try Self.compile("c++", "-std=c++11 -Wall -Werror", cxx, tmp + "/check", in: tmp)
            #expect(r.status == 0, "the header as C++: \(r.stdout)\(r.stderr)")
            let lib = try Self.buildDirectory() + "/libaudiosession.so.0"
            let symbols = try Support.runOutside(["nm", "-D", "--defined-only", lib], in: tmp)
            let names = symbols.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
            #expect(names.contains("as_session_new@@AUDIO_SESSION_0"))
            let foreign = names.filter { !$0.hasPrefix("as_") && $0 != "AUDIO_SESSION_0" }
            #expect(foreign.isEmpty, "exported beyond the API: \(foreign.prefix(10))")
            let dynamic = try Support.runOutside(["objdump", "-p", lib], in: tmp)
            #expect(dynamic.stdout.contains("SONAME               libaudiosession.so.0"), "\(dynamic.stdout)")
            #expect(!dynamic.stdout.contains("libswift"), "the Swift runtime is linked in, not needed at run time")
        }

        /// The example player: a call pauses it and it plays again after the call (R15);
        /// lost headphones stop it (R30, R31) and it stays stopped.
        @Test func r15R31TheCPlayerIsPausedByACallAndStoppedByLostHeadphones() throws {
            let tmp = try Support.makeTemp("capi")
            defer { Support.removeTemp(tmp) }
            let exe = try Self.buildPlayer(in: tmp)
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let player = try sandbox.spawn([exe, "60"], environment: try Self.environment())
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try Self.waitForLine(player, "playing", sandbox)
            // Before its stream exists, a session's route is every output present, in node
            // order; once it plays, it is where its stream goes: the headphones.
            #expect(Self.lines(player).first?.hasPrefix("activated (playback, output: ") == true, "\(Client.log(player))")
            try sandbox.waitUntil(timeout: 15, "the player's session to be playing on the headphones") {
                guard let s = try Client.session(sandbox, application: "c-player"), s["playing"] as? Bool == true else { return false }
                let outputs = (s["route"] as? [String: Any])?["outputs"] as? [[String: Any]] ?? []
                return outputs.map { $0["type"] as? String } == ["headphones"]
            }
            let call = try Client.run(sandbox, ["interrupt", "--as", "call", "--duration", "1"])
            #expect(call.status == 0, "\(call.stderr)")
            try Self.waitForLine(player, "interruption began (default)", sandbox)
            try Self.waitForLine(player, "interruption ended (shouldResume)", sandbox)
            try Self.waitForLine(player, "resumed", sandbox)
            try sandbox.waitUntil(timeout: 15, "the player to play again") {
                try Client.session(sandbox, application: "c-player")?["playing"] as? Bool == true
            }
            try sandbox.removeDevice(named: "headphones")
            try Self.waitForLine(player, "route change oldDeviceUnavailable (previous output: Headphones, headphones)", sandbox)
            try Self.waitForLine(player, "paused: the headphones went away", sandbox)
            try sandbox.waitUntil(timeout: 15, "the player's session to stop playing") {
                try Client.session(sandbox, application: "c-player")?["playing"] as? Bool == false
            }
            #expect(!Self.lines(player).contains { $0.hasPrefix("cannot") || $0.contains("error") }, "\(Client.log(player))")
        }

        /// A recorder in C: a `record` session's input captures from the microphone (a
        /// virtual source here), on the session's own connection.
        @Test func aCRecorderCapturesThroughItsSession() throws {
            let tmp = try Support.makeTemp("capi")
            defer { Support.removeTemp(tmp) }
            let source = tmp + "/recorder.c"
            try """
                #define _POSIX_C_SOURCE 200809L
                #include <audio-session/audio-session.h>
                #include <stdio.h>
                #include <time.h>
                static volatile uint64_t frames_seen;
                static void capture(void *data, const float *buffer, uint32_t frames, uint32_t channels)
                { (void)data; (void)buffer; (void)channels; frames_seen += frames; }
                int main(void) {
                    as_session *s = as_session_new("c-recorder");
                    int r = as_session_set_category(s, AS_CATEGORY_RECORD, AS_MODE_DEFAULT, 0);
                    if (r == 0) r = as_session_set_active(s, true, 0);
                    if (r < 0) { printf("failed: %s: %s\\n", as_error_name(r), as_session_last_error(s)); return 1; }
                    as_input *in = as_input_new(s, "c-recorder mic", 48000, 1, false, capture, NULL);
                    if (in == NULL) { printf("no input: %s\\n", as_session_last_error(s)); return 1; }
                    struct timespec t = { 0, 100000000 };
                    for (int i = 0; i < 100 && frames_seen < 48000; i++) nanosleep(&t, NULL);
                    printf("captured %s (node %u)\\n", frames_seen >= 48000 ? "a second" : "less than a second", as_input_node_id(in));
                    fflush(stdout);
                    as_input_free(in);
                    as_session_free(s);
                    return 0;
                }
                """.write(toFile: source, atomically: true, encoding: .utf8)
            let exe = tmp + "/recorder"
            let built = try Self.compile("cc", "-std=c99 -Wall -Werror", source, exe, in: tmp)
            #expect(built.status == 0, "\(built.stdout)\(built.stderr)")
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let mic = try sandbox.run(["pw-cli", "create-node", "adapter",
                                       "{ factory.name=support.null-audio-sink node.name=mic media.class=Audio/Source/Virtual object.linger=true audio.position=[MONO] }"],
                                      timeout: 10)
            #expect(mic.status == 0, "\(mic.stderr)")
            let p = try sandbox.spawn([exe], environment: try Self.environment())
            defer { p.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 30, "the recorder to finish") { !p.isRunning }
            #expect(p.exitStatus == 0, "\(Client.log(p))")
            #expect(Self.lines(p).contains { $0.hasPrefix("captured a second (node ") && !$0.hasSuffix("(node 0)") }, "\(Client.log(p))")
        }

        /// The Python ctypes example of docs/c-api.md: activated, interrupted by a call and
        /// resumed after it.
        @Test func r15ThePythonExampleIsInterruptedAndResumed() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let script = Support.checkoutRoot + "/examples/python-session.py"
            let p = try sandbox.spawn(["/usr/bin/python3", script, "60"], environment: try Self.environment())
            defer { p.terminate(signal: SIGKILL, timeout: 2) }
            try Self.waitForLine(p, "playing", sandbox)
            // Every output present before its stream exists, in node order.
            let first = Self.lines(p).first ?? ""
            #expect(first.hasPrefix("activated (output: ") && first.contains("headphones"), "\(Client.log(p))")
            try sandbox.waitUntil(timeout: 15, "its session to be playing") {
                try Client.session(sandbox, application: "python-session")?["playing"] as? Bool == true
            }
            let call = try Client.run(sandbox, ["interrupt", "--as", "call", "--duration", "1"])
            #expect(call.status == 0, "\(call.stderr)")
            try Self.waitForLine(p, "interruption began (default)", sandbox)
            try Self.waitForLine(p, "interruption ended (shouldResume)", sandbox)
            try Self.waitForLine(p, "resumed", sandbox)
        }
    }
}
