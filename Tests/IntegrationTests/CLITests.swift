import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    @Suite(.serialized)
    struct CLITests {
        @Test func jsonOutputsFollowTheDocumentedSchemas() throws {
            let schema = try CLISchema()
            #expect(schema.schemas.count >= 7)
            // The checker rejects what it should.
            #expect(!schema.check(["global": NSNull()], against: "status").isEmpty)
            #expect(!schema.check(["kind": "tuba", "id": 1], against: "sessionRef").isEmpty)

            let tmp = try Support.makeTemp("json")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let monitor = try Client.spawn(sandbox, ["monitor", "--json"])
            defer { _ = monitor.terminate(signal: SIGINT) }
            try sandbox.waitUntil(timeout: 30, "monitor to listen") { Client.log(monitor).contains("monitoring") }
            let legacy = try sandbox.spawn(["pw-play", "--media-role", "Music", file])
            defer { _ = legacy.terminate() }
            let player = try Client.startPlayer(sandbox, file: file)
            defer { _ = player.terminate() }

            let status = try Client.status(sandbox)
            #expect(schema.check(status, against: "status") == [])
            let sessions = status["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.contains { ($0["session"] as? [String: Any])?["kind"] as? String == "client" })
            #expect(sessions.contains { $0["legacy"] as? Bool == true })

            let route = try Client.run(sandbox, ["route", "--json"])
            #expect(route.status == 0)
            let doc = try JSONSerialization.jsonObject(with: Data(route.stdout.utf8))
            #expect(schema.check(doc, against: "route-command") == [])
            let outputs = (doc as? [String: Any])?["outputs"] as? [[String: Any]] ?? []
            #expect(outputs.contains { $0["uid"] as? String == "headphones" && $0["type"] as? String == "headphones" }, "\(outputs)")

            let events = try Client.waitFor(monitor, "an event", { _ in true })
            for e in Client.objects(monitor) { #expect(schema.check(e, against: "monitor") == [], "\(e)") }
            #expect(!events.isEmpty)
        }

        @Test func runWithARefusedCombinationExitsTwoAndNeverStartsTheCommand() throws {
            let tmp = try Support.makeTemp("run")
            defer { Support.removeTemp(tmp) }
            let marker = tmp + "/started"
            let exe = try Support.pwSessionPath()
            let r = try Support.runOutside([exe, "run", "--category", "record", "--options", "duckOthers", "--", "touch", marker], in: tmp)
            #expect(r.status == 2, "\(r.stderr)")
            #expect(r.stderr.contains("incompatibleCategory"), "\(r.stderr)")
            #expect(r.stderr.contains("[§4]"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: marker))

            let usage = try Support.runOutside([exe, "run", "--", "touch", marker], in: tmp)
            #expect(usage.status == 2)
            #expect(!FileManager.default.fileExists(atPath: marker))
        }

        @Test func runInjectsTheDeclarationIntoAnUnmodifiedProgram() throws {
            let tmp = try Support.makeTemp("inject")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let p = try Client.spawn(sandbox, ["run", "--category", "playback", "--mode", "spokenAudio", "--", "pw-play", file])
            defer { _ = p.terminate() }
            try sandbox.waitUntil(timeout: 30, "pw-play's declared session") {
                let sessions = try Client.status(sandbox)["sessions"] as? [[String: Any]] ?? []
                return sessions.contains { $0["mode"] as? String == "spokenAudio" && $0["category"] as? String == "playback" }
            }
            let env = try Client.run(sandbox, ["run", "--category", "ambient", "--", "sh", "-c", "echo \"$PIPEWIRE_PROPS|$PULSE_PROP\""])
            #expect(env.status == 0)
            #expect(env.stdout.contains("audio.session.category = \"ambient\""), "\(env.stdout)")
            #expect(env.stdout.contains("audio.session.category=\"ambient\""), "\(env.stdout)")
        }

        @Test func monitorShowsAScriptedScenarioInOrder() throws {
            let tmp = try Support.makeTemp("monitor")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let monitor = try Client.spawn(sandbox, ["monitor", "--json"])
            defer { _ = monitor.terminate(signal: SIGINT) }
            try sandbox.waitUntil(timeout: 30, "monitor to listen") { Client.log(monitor).contains("monitoring") }

            // Scenario: a podcast plays; a call comes and goes (notifying); the podcast resumes.
            // The call lasts longer than the podcast's fade-out (about half a second): one that
            // ends inside it interrupts nothing (R42).
            let player = try Client.startPlayer(sandbox, file: file, ["--mode", "spokenAudio"])
            defer { _ = player.terminate() }
            let r = try Client.run(sandbox, ["interrupt", "--as", "call", "--duration", "1.5"])
            #expect(r.status == 0)
            try Client.waitFor(player, "resumed", Client.event("resumed"))

            let ended = try Client.waitFor(monitor, "interruption ended in the monitor") {
                $0["type"] as? String == "interruption" && $0["phase"] as? String == "ended"
            }
            #expect(ended[0]["shouldResume"] as? Bool == true)
            let all = Client.objects(monitor)
            let seqs = all.compactMap { Client.int($0, "seq") }
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "\(seqs)")
            func index(_ match: ([String: Any]) -> Bool) -> Int? { all.firstIndex(where: match) }
            let playerActivated = index { $0["type"] as? String == "activation" && $0["ok"] as? Bool == true }
            let began = index { $0["type"] as? String == "interruption" && $0["phase"] as? String == "began" }
            let callActivated = began.flatMap { b in all.indices.first { $0 > b && all[$0]["type"] as? String == "activation" } }
            let endedAt = index { $0["type"] as? String == "interruption" && $0["phase"] as? String == "ended" }
            #expect(playerActivated != nil && began != nil && endedAt != nil, "\(all)")
            if let a = playerActivated, let b = began, let e = endedAt {
                #expect(a < b && b < e, "\(all)")
                // The call's own activation answer follows the began it caused (R11: pauses first).
                if let c = callActivated { #expect(c < e) }
                #expect(all[b]["session"] as? NSDictionary == all[e]["session"] as? NSDictionary)
            }
        }

        @Test func silentAndLockSwitchTheGlobalState() throws {
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            for (verb, key) in [("silent", "silentMode"), ("lock", "screenLocked")] {
                for (state, value) in [("on", true), ("off", false)] {
                    let r = try Client.run(sandbox, [verb, state])
                    #expect(r.status == 0, "\(verb) \(state): \(r.stderr)")
                    let g = try Client.status(sandbox)["global"] as? [String: Any]
                    #expect(g?[key] as? Bool == value, "\(verb) \(state): \(String(describing: g))")
                }
            }
            let bad = try Client.run(sandbox, ["silent", "maybe"])
            #expect(bad.status == 2)
        }

        @Test func everyVerbHasHelpWithExamples() throws {
            let tmp = try Support.makeTemp("help")
            defer { Support.removeTemp(tmp) }
            let exe = try Support.pwSessionPath()
            for verb in ["status", "monitor", "run", "play", "interrupt", "route", "silent", "lock", "agent", "sandbox"] {
                let r = try Support.runOutside([exe, verb, "--help"], in: tmp)
                #expect(r.status == 0, "\(verb)")
                #expect(r.stdout.contains("Examples:"), "\(verb): \(r.stdout)")
            }
            let v = try Support.runOutside([exe, "--version"], in: tmp)
            #expect(v.status == 0 && !v.stdout.isEmpty)
        }
    }
}
