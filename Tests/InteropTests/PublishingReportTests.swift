import Foundation
import Testing
import TestSupport

/// Issue 36, publishing: `--json` counts every reconnect attempt (it said `"reconnects": 0` after
/// six or seven), and no part of a destination's user-info is printed (a password given alone,
/// `icecast://SECRET@host`, was echoed back in the error).
@Suite(.blocking) struct PublishingReportTests {
    @Test func jsonCountsEveryReconnectAttempt() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try FirstHourTests.wav("in.wav", in: directory, seconds: 3)
        let port = try LocalPort.freeTCP()
        let run = try FirstHourTests.keyframe(["publish", input, "icecast://source:hidden@127.0.0.1:\(port)/x.aac", "--json",
                                               "--reconnect-max", "0.5"])
        #expect(run.status == 1, "status \(run.status): \(run.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        let destination = try #require((object?["destinations"] as? [[String: Any]])?.first, "\(run.standardOutput)")
        let attempts = try #require(destination["reconnectAttempts"] as? Int, "\(destination)")
        // 3 s with waits of 0.5 s at most: several tries after the first refusal, none made.
        #expect(attempts >= 3, "\(destination)")
        #expect(destination["reconnects"] as? Int == 0, "\(destination)")
        #expect(run.standardError.contains("\(attempts) reconnect attempts"), "\(run.standardError)")
    }

    @Test(arguments: ["icecast://SECRETWORD@127.0.0.1:1/x.aac", "icecast://SECRETWORD@127.0.0.1", "icecast://SECRETWORD:@127.0.0.1:1/x",
                      "icecast://source:SECRETWORD@127.0.0.1:99999/x", "rtmp://SECRETWORD@127.0.0.1:1/live/key",
                      "icecast://SECRETWORD@bad host/x"])
    func noPartOfTheUserInfoIsPrinted(url: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try FirstHourTests.wav("in.wav", in: directory, seconds: 1)
        for arguments in [["publish", input, url, "--duration", "1", "--reconnect-max", "0.5"],
                          ["publish", input, url, "--duration", "1", "--reconnect-max", "0.5", "--json"]] {
            let run = try FirstHourTests.keyframe(arguments)
            #expect(run.status != 0)
            #expect(!(run.standardError + run.standardOutput).contains("SECRETWORD"), "\(url): \(run.standardError) \(run.standardOutput)")
        }
    }
}
