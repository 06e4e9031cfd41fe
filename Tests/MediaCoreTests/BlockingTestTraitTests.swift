import Foundation
import Synchronization
import Testing
@testable import TestSupport

/// `.blocking` moves a test that waits on its thread off the cooperative pool, and hands out
/// its slots first come, first served.
@Suite(.blocking) struct BlockingTestTraitTests {
    @Test func aBlockingTestRunsOnAThreadOfItsOwn() async throws {
        let thread = try #require(BlockingTestTrait.thread)
        #expect(thread.isCurrent)
        #expect(BlockingTestTrait.heldSlots == 1)
        // After a suspension the test comes back to its own thread, not to the pool's.
        try await Task.sleep(for: .milliseconds(10))
        #expect(thread.isCurrent)
        // So does a synchronous wait in it: a tool's exit, a poll.
        syncWait()
        #expect(thread.isCurrent)
    }

    @Test func aSynchronousBlockingTestToo() throws {
        let thread = try #require(BlockingTestTrait.thread)
        #expect(thread.isCurrent)
    }

    @Test func aWaiterForEverySlotIsNotOvertaken() async {
        let slots = BlockingTestSlots(count: 2)
        let order = Order()
        await slots.acquire(1)
        let all = Task {
            await slots.acquire(2)
            await order.append("all")
            await slots.release(2)
        }
        while await slots.waitingCount < 1 { await Task.yield() }
        let one = Task {
            await slots.acquire(1)
            await order.append("one")
            await slots.release(1)
        }
        while await slots.waitingCount < 2 { await Task.yield() }
        // One slot is free, but the test asking for both came first: the later one waits too.
        #expect(await order.names.isEmpty)
        await slots.release(1)
        await all.value
        await one.value
        #expect(await order.names == ["all", "one"])
    }

    func syncWait() { Thread.sleep(forTimeInterval: 0.01) }

    static func block(seconds: Double) { Thread.sleep(forTimeInterval: seconds) }

    /// Blocks the thread until `flag` is set (at most ten minutes).
    static func block(until flag: Flag) {
        let start = Date()
        while !flag.isSet, Date().timeIntervalSince(start) < 600 { Thread.sleep(forTimeInterval: 0.01) }
    }

    final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    /// A hang guard watches from the global executor: a body that blocks its thread past the
    /// limit is recorded, and one within it is not. The blocking body waits until the guard has
    /// fired, however long a busy pool takes to run the watch.
    @Test func aHangGuardRecordsABodyThatBlocksPastIt() async throws {
        let test = try #require(Test.current)
        let fired = Flag()
        await withKnownIssue {
            try await HangGuardTrait.run({ Self.block(until: fired) }, limit: .milliseconds(50), test: test, expired: { fired.set() })
        }
        #expect(fired.isSet)
        try await HangGuardTrait.run({ Self.block(seconds: 0.01) }, limit: .seconds(60), test: test)
    }

    actor Order {
        var names: [String] = []
        func append(_ name: String) { names.append(name) }
    }
}

/// `.hangGuard` outside a blocking suite watches the test itself, from its start. (Such a test
/// runs on the cooperative pool, so its body here waits without blocking a thread: a body that
/// blocked a pool thread while the others were busy could keep the watch from running, which is
/// why blocking tests take `.blocking`.)
@Suite struct HangGuardTraitTests {
    @Test func aHangGuardOutsideABlockingSuiteWatchesTheTest() async throws {
        let test = try #require(Test.current)
        let guardTrait: HangGuardTrait = .hangGuard(minutes: 15)
        await withKnownIssue {
            try await HangGuardTrait(limit: .milliseconds(50)).provideScope(for: test, testCase: nil) {
                try await Task.sleep(for: .seconds(3))
            }
        }
        try await guardTrait.provideScope(for: test, testCase: nil) {}
    }
}
