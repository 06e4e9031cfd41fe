import Testing
@testable import MediaCore

/// The free processors a segment-parallel encode is sized from, read from `/proc/stat`.
struct IdleProcessorsTests {
    /// Two readings of a 2-processor machine, `busy` of the 200 ticks between them busy.
    static func readings(busy: UInt64) -> (IdleProcessors.Totals, IdleProcessors.Totals) {
        let before = IdleProcessors.totals(parsing: """
            cpu  1000 0 500 8000 100 0 20 0 0 0
            cpu0 500 0 250 4000 50 0 10 0 0 0
            cpu1 500 0 250 4000 50 0 10 0 0 0
            intr 12345
            """)!
        let after = IdleProcessors.totals(parsing: """
            cpu  \(1000 + busy) 0 500 \(8000 + 200 - busy) 100 0 20 0 0 0
            cpu0 500 0 250 4000 50 0 10 0 0 0
            cpu1 500 0 250 4000 50 0 10 0 0 0
            intr 12345
            """)!
        return (before, after)
    }

    @Test func anIdleMachineGivesEveryUsableProcessor() {
        let (before, after) = Self.readings(busy: 0)
        #expect(before.processors == 2 && before.total == 9620 && before.idle == 8100)
        #expect(IdleProcessors.free(from: before, to: after, usable: 2) == 2)
        #expect(IdleProcessors.free(from: before, to: after, usable: 1) == 1, "never more than this process may use")
    }

    @Test func aCoreThatAnotherJobHoldsIsNotCounted() {
        // One core busy (100 of 200 ticks): one is free, and the encode runs serially.
        let (before, after) = Self.readings(busy: 100)
        #expect(IdleProcessors.free(from: before, to: after, usable: 2) == 1)
        // 0.4 of a core busy leaves both (two encoders on 1.6 cores beat one); 0.6 leaves one.
        let (lightBefore, lightAfter) = Self.readings(busy: 40)
        #expect(IdleProcessors.free(from: lightBefore, to: lightAfter, usable: 2) == 2)
        let (halfBefore, halfAfter) = Self.readings(busy: 60)
        #expect(IdleProcessors.free(from: halfBefore, to: halfAfter, usable: 2) == 1)
        // Both busy: still one, the serial encode.
        let (fullBefore, fullAfter) = Self.readings(busy: 200)
        #expect(IdleProcessors.free(from: fullBefore, to: fullAfter, usable: 2) == 1)
    }

    /// A process confined to some processors (`taskset`, a container's cpuset) counts their
    /// idle time only: a busy processor outside its set does not make it serial, and a busy one
    /// inside does.
    @Test func onlyTheProcessorsThisProcessMayUseCount() throws {
        let text = """
            cpu  1000 0 0 1000 0 0 0 0 0 0
            cpu0 1000 0 0 0 0 0 0 0 0 0
            cpu1 0 0 0 500 0 0 0 0 0 0
            cpu2 0 0 0 500 0 0 0 0 0 0
            """
        let all = try #require(IdleProcessors.totals(parsing: text))
        #expect(all.processors == 3 && all.idle == 1000 && all.total == 2000)
        let mine = try #require(IdleProcessors.totals(parsing: text, of: [1, 2]))
        #expect(mine.processors == 2 && mine.idle == 1000 && mine.total == 1000)
        let busy = try #require(IdleProcessors.totals(parsing: text, of: [0]))
        #expect(busy.processors == 1 && busy.idle == 0)
        // A set naming no processor of the file: the machine's line.
        #expect(IdleProcessors.totals(parsing: text, of: [7])?.processors == 3)
        #expect(IdleProcessors.processors(inList: "0-3,6,8-9\n") == [0, 1, 2, 3, 6, 8, 9])
        #expect(IdleProcessors.processors(inList: " 2") == [2])
        #expect(IdleProcessors.processors(inList: "3-1") == nil && IdleProcessors.processors(inList: "x") == nil)
        #expect(IdleProcessors.allowedProcessors()?.isEmpty == false, "this process's Cpus_allowed_list")
    }

    @Test func unreadableCountersCountEveryUsableProcessor() {
        #expect(IdleProcessors.totals(parsing: "intr 1 2 3") == nil)
        #expect(IdleProcessors.totals(parsing: "cpu  1 2") == nil)
        let (before, _) = Self.readings(busy: 0)
        #expect(IdleProcessors.free(from: before, to: before, usable: 2) == 2, "no time passed")
        let live = IdleProcessors.count(usable: 64, over: .milliseconds(20))
        #expect((1...64).contains(live))
        #expect(IdleProcessors.totals() != nil, "/proc/stat reads here")
    }
}
