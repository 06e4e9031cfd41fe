public import Testing
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs each test of a suite that blocks its thread (waiting for a tool to exit, polling a file,
/// sleeping) on a thread of its own, so that the wait never holds one of the few threads of the
/// cooperative pool (two on a 2-core machine) that every other test, exit test and time limit
/// needs; and bounds how many such tests run at once.
///
/// Without it, two tests each waiting for ffmpeg held both of the pool's threads: every other
/// test, however trivial, waited for minutes, and a test with a time limit could fail without
/// having run.
///
/// `.blocking` takes one of ``BlockingTestTrait/slotCount`` slots; `.realTime` takes them all, so
/// that no other blocking test (and its peer tools) competes with a test that listens to a live
/// stream in real time. A test inside nested suites with these traits takes the most any of them
/// asks for, on one thread.
public struct BlockingTestTrait: SuiteTrait, TestTrait, TestScoping {
    /// How many blocking tests run at once: one per processor, at least two.
    public static let slotCount = max(2, ProcessInfo.processInfo.activeProcessorCount)

    /// The slots this test holds while it runs.
    let slots: Int

    /// The trait applies to every test of the suite it is given to.
    public var isRecursive: Bool { true }

    /// The slots the running test holds (a task-local, so that a nested suite's trait knows).
    @TaskLocal static var heldSlots = 0

    /// The thread of the running test.
    @TaskLocal static var thread: DedicatedThreadExecutor?

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        if Self.heldSlots > 0 {
            try await function()
            return
        }
        // A test inherits the traits of the suites around it: the first scope takes the most
        // any of them asks for, once (taking them one scope at a time could deadlock).
        let slots = test.traits.compactMap { ($0 as? BlockingTestTrait)?.slots }.max() ?? self.slots
        let limit = test.traits.compactMap { ($0 as? HangGuardTrait)?.limit }.min()
        await BlockingTestSlots.shared.acquire(slots)
        let thread = DedicatedThreadExecutor(name: "blocking test: \(test.name)")
        do {
            try await Self.$heldSlots.withValue(slots) {
                try await Self.$thread.withValue(thread) {
                    try await withTaskExecutorPreference(thread) {
                        try await HangGuardTrait.run(function, limit: limit, test: test)
                    }
                }
            }
        } catch {
            thread.finish()
            await BlockingTestSlots.shared.release(slots)
            throw error
        }
        thread.finish()
        await BlockingTestSlots.shared.release(slots)
    }
}

extension Trait where Self == BlockingTestTrait {
    /// Each test runs on its own thread, one slot of ``BlockingTestTrait/slotCount``.
    public static var blocking: Self { BlockingTestTrait(slots: 1) }

    /// Each test runs on its own thread while no other blocking test runs.
    public static var realTime: Self { BlockingTestTrait(slots: BlockingTestTrait.slotCount) }
}

/// A time limit for a test of a `.blocking` or `.realTime` suite, counted from when the test
/// starts to run: after its slot is free, not from when it was queued for one. (Swift Testing's
/// `.timeLimit` counts from before the suite's traits run, so a test queued behind long ones
/// would exceed it without having run.) Like `.timeLimit`, it guards against hangs, never times a
/// job: a test past it is recorded as an issue, and is waited for.
public struct HangGuardTrait: TestTrait, SuiteTrait, TestScoping {
    /// The limit.
    let limit: Duration

    /// The limit applies to every test of a suite it is given to.
    public var isRecursive: Bool { true }

    /// In a `.blocking` or `.realTime` suite, that trait watches the limit once the test holds
    /// its slot; elsewhere, this does, from the start.
    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        if test.traits.contains(where: { $0 is BlockingTestTrait }) {
            try await function()
        } else {
            try await Self.run(function, limit: limit, test: test)
        }
    }

    /// Runs `function`, recording an issue if it runs past `limit` (and then calling `expired`).
    /// The watch runs on the global executor, not on the test's own thread, which the test may
    /// block.
    static func run(_ function: @Sendable () async throws -> Void, limit: Duration?, test: Test,
                    expired: (@Sendable () -> Void)? = nil) async throws {
        guard let limit else {
            try await function()
            return
        }
        // The children end before this returns: `function` does not outlive the call.
        try await withoutActuallyEscaping(function) { function in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask { try await function(); return true }
                group.addTask(executorPreference: globalConcurrentExecutor) {
                    do { try await Task.sleep(for: limit) } catch { return true }
                    // Here, not in the test's task: that one may be waiting for the thread the
                    // body blocks.
                    expired?()
                    return false
                }
                let finished = try await group.next() ?? true
                if !finished {
                    Issue.record("\(test.name) ran past its hang guard of \(limit) (counted from when it started to run)")
                }
                group.cancelAll()
                try await group.waitForAll()
            }
        }
    }
}

extension Trait where Self == HangGuardTrait {
    /// A hang guard of `minutes`, counted from when the blocking test starts to run.
    public static func hangGuard(minutes: Int) -> Self { HangGuardTrait(limit: .seconds(minutes * 60)) }
}

/// The slots of ``BlockingTestTrait``, handed out first come, first served: a test that needs
/// them all is not overtaken by tests that need one.
actor BlockingTestSlots {
    static let shared = BlockingTestSlots(count: BlockingTestTrait.slotCount)

    private var free: Int
    private var waiting: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(count: Int) { free = count }

    /// How many are waiting for slots.
    var waitingCount: Int { waiting.count }

    func acquire(_ count: Int) async {
        if waiting.isEmpty, free >= count {
            free -= count
            return
        }
        await withCheckedContinuation { waiting.append((count, $0)) }
    }

    func release(_ count: Int) {
        free += count
        while let first = waiting.first, free >= first.count {
            free -= first.count
            waiting.removeFirst()
            first.continuation.resume()
        }
    }
}

/// A task executor with a thread of its own, which runs the jobs given to it in order. After
/// ``finish()`` the thread ends once it has nothing to run; a job given later (an unstructured
/// task that outlived its test inherits the executor) starts a thread again.
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let name: String
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false
    private var threadRunning = false
    private var threadID: pthread_t?

    /// Whether the caller runs on this executor's thread.
    var isCurrent: Bool {
        condition.lock()
        defer { condition.unlock() }
        return threadID.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    init(name: String) {
        self.name = name
        condition.lock()
        startThread()
        condition.unlock()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        if !threadRunning { startThread() }
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once it has run every job given so far.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Called with the condition's lock held.
    private func startThread() {
        threadRunning = true
        let thread = Thread { [self] in drain() }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func drain() {
        condition.lock()
        threadID = pthread_self()
        condition.unlock()
        while true {
            condition.lock()
            while jobs.isEmpty, !finished { condition.wait() }
            if jobs.isEmpty {
                threadRunning = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
