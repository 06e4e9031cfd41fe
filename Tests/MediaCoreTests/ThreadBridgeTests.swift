import Dispatch
import MediaCore
import Synchronization
import Testing

/// The bridge between the pipeline's threads and Swift concurrency: blocking work awaited, a
/// task's cancellation reaching a job's control, and a deadline for a suspended task.
@Suite struct ThreadBridgeTests {
    @Test func blockingWorkIsAwaitedWithItsResultOrError() async throws {
        let semaphore = DispatchSemaphore(value: 0)
        // The body blocks its thread until signalled from another: not a pool thread's wait.
        DispatchQueue.global().async { semaphore.signal() }
        let value = await ThreadBridge.run { () -> Int in
            semaphore.wait()
            return 42
        }
        #expect(value == 42)
        await #expect(throws: PipelineError.self) {
            try await ThreadBridge.run { () throws(PipelineError) -> Int in throw .unsupported("no") }
        }
    }

    @Test func aCancelledTaskCancelsTheJobItAwaits() async throws {
        let started = DispatchSemaphore(value: 0)
        let task = Task {
            try await ThreadBridge.run { (control: JobControl) throws(PipelineError) -> Int in
                started.signal()
                // A job polls its control between elements.
                while !control.isCancelled { DispatchSemaphore(value: 0).wait(for: .milliseconds(1)) }
                throw .cancelled
            }
        }
        await ThreadBridge.run { started.wait() }
        task.cancel()
        await #expect(throws: PipelineError.self) { try await task.value }
    }

    @Test func aTaskCancelledBeforeTheJobNeverStartsIt() async throws {
        let ran = Atomic<Bool>(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await ThreadBridge.run { (_: JobControl) throws(PipelineError) -> Int in
                ran.store(true, ordering: .relaxed)
                return 1
            }
        }
        let outcome = await task.result
        #expect(throws: PipelineError.self) { try outcome.get() }
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test func aDeadlineResumesASuspendedTask() async {
        let start = ContinuousClock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            ThreadBridge.resume(after: .milliseconds(20)) { continuation.resume() }
        }
        #expect(ContinuousClock.now - start >= .milliseconds(20))
    }
}
