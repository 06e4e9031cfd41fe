import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit

/// The options every command that publishes live shares (`publish`, `record --publish`).
struct PublishingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Seconds of audio each destination queues while its server is slow or away; past it the oldest frames are dropped (counted).",
                               valueName: "seconds"))
    var publishQueue: Double = 5

    @Option(help: ArgumentHelp("Longest wait between reconnects (capped exponential backoff from 0.5 s).", valueName: "seconds"))
    var reconnectMax: Double = 30

    @Option(help: ArgumentHelp("A PEM file of certificate authorities for rtmps:// and icecasts:// (the system's by default).", valueName: "file"))
    var caFile: String?

    /// Checks the numbers.
    func check() throws {
        guard (0.1...600).contains(publishQueue) else { throw ValidationError("--publish-queue must be 0.1–600 seconds") }
        guard (0.5...3600).contains(reconnectMax) else { throw ValidationError("--reconnect-max must be 0.5–3600 seconds") }
    }

    /// The reconnect policy asked for.
    var policy: ReconnectPolicy { ReconnectPolicy(maximumDelay: .milliseconds(Int64(reconnectMax * 1000))) }

    /// The queue asked for.
    var queueDuration: Duration { .milliseconds(Int64(publishQueue * 1000)) }

    /// Parses the destinations as given (`env:NAME`, `file:PATH`, URLs with `#bitrate=`), and
    /// checks that each host resolves: all before anything starts. Errors name the destination
    /// with its secrets masked.
    static func destinations(_ texts: [String]) throws -> [PublishingDestination] {
        var parsed: [PublishingDestination] = []
        for text in texts {
            // A URL that does not parse is the command line's mistake (64); a name that does not
            // resolve is the network's (1).
            let destination: PublishingDestination
            do throws(PublishingError) {
                destination = try PublishingDestination.parse(
                    text, environment: { ProcessInfo.processInfo.environment[$0] },
                    readFile: { try String(contentsOfFile: $0, encoding: .utf8) }, registry: Keyframe.destinations)
            } catch {
                throw CommandFailure(error.message, status: .usage)
            }
            do throws(PublishingError) {
                try destination.checkResolves()
            } catch {
                throw CommandFailure(error.message)
            }
            parsed.append(destination)
        }
        return parsed
    }
}

/// One destination's figures in `--json`: `reconnects` counts the connections made after a
/// failure, `reconnectAttempts` every connection tried after one (made or not).
struct DestinationReport: Encodable {
    var destination: String
    var scheme: String
    var bitrate: Int
    var state: String
    var bytesSent: Int64
    var framesSent: Int64
    var framesDropped: Int64
    var reconnects: Int
    var reconnectAttempts: Int
    var connectedSeconds: Double
    var lastError: String?

    init(_ snapshot: DestinationStatistics.Snapshot) {
        destination = snapshot.destination
        scheme = snapshot.scheme
        bitrate = snapshot.bitrate
        state = snapshot.state.rawValue
        bytesSent = snapshot.bytesSent
        framesSent = snapshot.framesSent
        framesDropped = snapshot.framesDropped
        reconnects = snapshot.reconnects
        reconnectAttempts = snapshot.reconnectAttempts
        connectedSeconds = (snapshot.connectedSeconds * 1000).rounded() / 1000
        lastError = snapshot.lastError
    }

    /// A line for the terminal: `rtmp://host/app/**** connected, 1234 frames, 0 dropped`.
    static func line(_ snapshot: DestinationStatistics.Snapshot) -> String {
        var text = "\(snapshot.destination): \(snapshot.state.rawValue), \(snapshot.framesSent) frames sent"
        if snapshot.framesDropped > 0 { text += ", \(snapshot.framesDropped) dropped" }
        if snapshot.reconnects > 0 { text += ", \(snapshot.reconnects) reconnect\(snapshot.reconnects == 1 ? "" : "s")" }
        if snapshot.reconnectAttempts > snapshot.reconnects {
            text += ", \(snapshot.reconnectAttempts) reconnect attempt\(snapshot.reconnectAttempts == 1 ? "" : "s")"
        }
        if let error = reason(snapshot), snapshot.state != .connected { text += " (\(error))" }
        return text
    }

    /// The last error of `snapshot`'s destination, without the destination's name it starts
    /// with (the line says it already).
    static func reason(_ snapshot: DestinationStatistics.Snapshot) -> String? {
        guard let error = snapshot.lastError else { return nil }
        let prefix = snapshot.destination + ": "
        return error.hasPrefix(prefix) ? String(error.dropFirst(prefix.count)) : error
    }

    /// Whether `snapshot`'s destination received everything: it ended cleanly, dropping nothing.
    static func receivedEverything(_ snapshot: DestinationStatistics.Snapshot) -> Bool {
        snapshot.state == .finished && snapshot.framesDropped == 0 && snapshot.framesSent > 0
    }

    /// Ends a live job by what its destinations received (the README's exit statuses): a
    /// failure (1) when none received anything, ``ExitStatus/damaged`` (3) when one did not
    /// receive everything; nothing when all did.
    static func finish(_ snapshots: [DestinationStatistics.Snapshot]) throws {
        guard !snapshots.isEmpty else { return }
        if snapshots.allSatisfy({ $0.framesSent == 0 }) {
            let reasons = snapshots.map { "\($0.destination): \(reason($0) ?? $0.state.rawValue)" }
            throw CommandFailure("nothing was delivered: " + reasons.joined(separator: "; "))
        }
        if !snapshots.allSatisfy(receivedEverything) { throw ExitStatus.damaged.exitCode }
    }

    /// Warns about each destination that stopped for good or dropped frames.
    static func warnings(_ snapshots: [DestinationStatistics.Snapshot]) {
        for snapshot in snapshots {
            if snapshot.state == .stopped {
                Terminal.warning("\(snapshot.destination) stopped: \(snapshot.lastError ?? "refused")")
            } else if snapshot.framesDropped > 0 {
                Terminal.warning(line(snapshot))
            }
        }
    }
}
