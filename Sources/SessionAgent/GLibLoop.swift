import CGIO
import Foundation

/// One thread running a GLib main loop on a context of its own: where the agent's D-Bus
/// connections deliver their signals and where GSettings reports changes. Everything the
/// agent knows lives on this thread; other threads hand it work with `async` or `sync`.
///
/// GDBus's blocking calls may be made on this thread: GDBus does its I/O on a worker
/// thread of its own and waits for the reply on a private context, so a call neither
/// deadlocks nor dispatches another callback in the middle of the caller's work.
public final class GLibLoop: @unchecked Sendable {
    let context: OpaquePointer
    private let mainLoop: OpaquePointer
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stopped = false

    public init(name: String = "session-agent") {
        context = g_main_context_new()
        mainLoop = g_main_loop_new(context, 0)
        let started = DispatchSemaphore(value: 0)
        let pointers = Pointers(context: context, loop: mainLoop)
        let done = finished
        let thread = Thread {
            g_main_context_push_thread_default(pointers.context)
            started.signal()
            g_main_loop_run(pointers.loop)
            g_main_context_pop_thread_default(pointers.context)
            done.signal()
        }
        thread.name = name
        thread.start()
        started.wait()
    }

    deinit {
        stop()
        g_main_loop_unref(mainLoop)
        g_main_context_unref(context)
    }

    /// Whether the caller is the loop's thread.
    public var isCurrent: Bool { g_main_context_is_owner(context) != 0 }

    /// Runs `body` on the loop's thread, later (never from inside the caller).
    public func async(_ body: @escaping () -> Void) {
        attach(g_idle_source_new(), body)
    }

    /// Runs `body` on the loop's thread after `milliseconds`.
    public func after(milliseconds: UInt32, _ body: @escaping () -> Void) {
        attach(g_timeout_source_new(milliseconds), body)
    }

    /// Runs `body` on the loop's thread and returns its result: directly when the caller is
    /// that thread, else waiting for it. After `stop()`, it runs on the caller's thread.
    public func sync<T>(_ body: () throws -> T) rethrows -> T {
        if isCurrent || isStopped { return try body() }
        return try withoutActuallyEscaping(body) { escapable in
            let box = SyncWork(escapable)
            let done = DispatchSemaphore(value: 0)
            let queued = attach(g_idle_source_new()) {
                box.run()
                done.signal()
            }
            // Queued work always runs, on the loop or after it stopped (`stop`); work the
            // loop refused because it had stopped runs here.
            if queued { done.wait() } else { box.run() }
            // The closure must not outlive this call: the idle source may be freed later.
            return try box.take()
        }
    }

    /// One `sync` call's work and result.
    final class SyncWork<T>: @unchecked Sendable {
        private var body: (() throws -> T)?
        private var result: Result<T, Error>?
        init(_ body: @escaping () throws -> T) { self.body = body }
        func run() {
            guard let b = body else { return }
            body = nil
            result = Result { try b() }
        }
        func take() throws -> T {
            body = nil
            guard let r = result else { preconditionFailure("the loop did not run the work") }
            result = nil
            return try r.get()
        }
    }

    var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Ends the loop (after the work already queued) and waits for its thread.
    public func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        guard first else { return }
        let loop = mainLoop
        if isCurrent {
            g_main_loop_quit(loop)
            return
        }
        attach(g_idle_source_new(), { g_main_loop_quit(loop) }, evenStopped: true)
        finished.wait()
        // Work queued while the loop was quitting runs now, on this thread: a `sync` waiting
        // for it must not wait for ever.
        g_main_context_push_thread_default(context)
        while g_main_context_pending(context) != 0 { g_main_context_iteration(context, 0) }
        g_main_context_pop_thread_default(context)
    }

    /// Queues `body` on `source`; false when the loop has stopped and it was not queued.
    @discardableResult
    private func attach(_ source: UnsafeMutablePointer<GSource>?, _ body: @escaping () -> Void, evenStopped: Bool = false) -> Bool {
        guard let source else { return false }
        // Checked and attached under the lock `stop` sets `stopped` with: what is attached
        // here is attached before the stop, and runs on the loop or in stop's drain.
        lock.lock()
        defer { lock.unlock() }
        if !evenStopped && stopped {
            g_source_unref(source)
            return false
        }
        let box = Unmanaged.passRetained(Work(body)).toOpaque()
        g_source_set_callback(source, { data in
            if let data { Unmanaged<Work>.fromOpaque(data).takeUnretainedValue().body() }
            return 0  // G_SOURCE_REMOVE: once
        }, box, { data in
            if let data { Unmanaged<Work>.fromOpaque(data).release() }
        })
        g_source_attach(source, context)
        g_source_unref(source)
        return true
    }

    struct Pointers: @unchecked Sendable {
        let context: OpaquePointer
        let loop: OpaquePointer
    }

    final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
