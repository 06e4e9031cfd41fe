import ArgumentParser
import Dispatch
import KeyFrameKit

/// Where a live rendition goes (`record --hls`, repeated): one local directory, and object
/// stores it is copied into as it is written (``ObjectStoreReplica``). Without a directory the
/// rendition is written in a private staging directory, removed at the end.
struct StoreReplicas {
    /// The local directory written (the one given, or the staging one); `nil` without `--hls`.
    let directory: String?
    /// The staging directory, when no local one was given.
    let staging: FilePath?
    /// A replica per store, in the order given.
    let replicas: [ObjectStoreReplica]

    /// The directory given, or else the first store's URL, its secrets masked.
    var shownName: String? { staging == nil ? directory : replicas.first?.description }

    /// The stores `targets` name, each asked first whether it holds a package already (its
    /// playlist or master playlist): a refusal (a wrong key, a missing bucket) stops here.
    init(_ targets: [String], objectStore: ObjectStoreOptions, spoolLimit: Int64, gapAfter: Duration) throws {
        var directory: String?
        var replicas: [ObjectStoreReplica] = []
        // A store refused after others were started leaves none of them running.
        var started = false
        defer { if !started { for replica in replicas { replica.abandon() } } }
        for target in targets {
            let store: (any ObjectStore)?
            do { store = try objectStore.store(named: target) } catch { throw CommandFailure("\(error)") }
            guard let store else {
                directory = target
                continue
            }
            do throws(PipelineError) {
                try Packaging.requireNoPackage(in: store)
            } catch where error.isTransient {
                // Down now: its objects wait in the spool until it answers, as in an outage later.
                Terminal.warning("\(store.description) does not answer (\(error)); recording anyway, its objects queued until it does")
            } catch {
                throw CommandFailure("\(error)")
            }
            replicas.append(ObjectStoreReplica(store: store, spoolLimit: spoolLimit, gapAfter: gapAfter))
        }
        if directory == nil, !replicas.isEmpty {
            let made: FilePath
            do { made = try FileSystemCalls.makeTemporaryDirectory(prefix: "keyframe-record-") } catch {
                throw CommandFailure("cannot make a staging directory in \(FileSystemCalls.temporaryDirectory): \(error)")
            }
            UncommittedFiles.insertTree(made)
            staging = made
            directory = made.appending("live").string
        } else {
            staging = nil
        }
        self.directory = directory
        self.replicas = replicas
        started = true
    }

    /// Gives every store up now: what is queued is counted lost (a Ctrl-C while they catch up).
    func giveUp() {
        for replica in replicas { replica.giveUp(because: "given up by a signal") }
    }

    /// Drops what the stores still hold queued (a recording that failed; nothing once they
    /// have finished) and removes the staging directory, if there is one.
    func discard() {
        for replica in replicas { replica.abandon() }
        if let staging { UncommittedFiles.removeTree(staging) }
    }

    /// Waits for each store to take what is queued (the final playlist last), at most
    /// `timeout`, a line on the terminal saying what is left, and returns what each did.
    func finish(within timeout: Duration) -> [StoreReplicaReport] {
        guard !replicas.isEmpty else { return [] }
        if replicas.contains(where: { $0.status.backlogObjects > 0 }) {
            Terminal.error("waiting up to \(Int(timeout.inSeconds)) s (--store-timeout) for the stores to take what is queued; "
                           + "Ctrl-C now gives them up (what is left is reported lost)\n")
        }
        let watching = replicas
        let done = DispatchSemaphore(value: 0)
        let watched = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var drew = false
            while done.wait(timeout: .now() + .milliseconds(200)) == .timedOut {
                let waiting = watching.filter { $0.status.backlogObjects > 0 }
                if Terminal.standardErrorIsTerminal, !waiting.isEmpty {
                    let text = waiting.map { "\($0.description): \($0.status.backlogObjects) objects left (\($0.status.state.rawValue))" }
                    Terminal.error("\ruploading  " + text.joined(separator: "; ") + "\u{1B}[K")
                    drew = true
                }
            }
            if drew { Terminal.error("\n") }
            watched.signal()
        }
        // Every store against the one deadline, at once; each status is final once finished.
        let replicas = self.replicas
        DispatchQueue.performBlocking(iterations: replicas.count, label: "KeyFrameKit.StoreReplicas") { index in _ = replicas[index].finish(within: timeout) }
        let reports = replicas.map { StoreReplicaReport(store: $0.description, status: $0.status) }
        done.signal()
        watched.wait()
        return reports
    }

    /// Fails when a store refused for good or lost objects; warns of gaps.
    static func check(_ reports: [StoreReplicaReport]) throws {
        for report in reports where !report.gaps.isEmpty && report.state != "failed" {
            Terminal.warning("\(report.store): \(report.gaps.count) object\(report.gaps.count == 1 ? "" : "s") failed alone and went as gaps "
                             + "(EXT-X-GAP): \(report.gaps.prefix(5).joined(separator: ", "))")
        }
        if let failed = reports.first(where: { $0.state == "failed" || !$0.lost.isEmpty }) {
            // The store's errors name it already.
            let reason = failed.lastError.map { $0.hasPrefix(failed.store) ? $0 : "\(failed.store): \($0)" } ?? "\(failed.store): stopped"
            throw CommandFailure("\(reason); \(failed.lost.count) object\(failed.lost.count == 1 ? "" : "s") not stored"
                                 + (failed.lost.isEmpty ? "" : " (\(failed.lost.prefix(5).joined(separator: ", ")))"))
        }
    }
}

/// What a store a rendition was copied into took (`record --json`'s `stores`).
struct StoreReplicaReport: Encodable {
    /// The store's URL, secrets masked.
    var store: String
    /// `current` (everything went up) or `failed`.
    var state: String
    var uploadedObjects: Int
    var uploadedBytes: Int64
    /// Segments removed after they left the window.
    var removedObjects: Int
    /// Requests that failed, each try counted.
    var failures: Int
    /// Removals given up while other requests went through (those objects stay).
    var droppedRemovals: Int
    /// Objects that failed alone and were marked EXT-X-GAP.
    var gaps: [String]
    /// Objects never stored (the spool was full, or the store stopped).
    var lost: [String]
    var lastError: String?

    init(store: String, status: ObjectStoreReplica.Status) {
        self.store = store
        state = status.state.rawValue
        uploadedObjects = status.uploadedObjects
        uploadedBytes = status.uploadedBytes
        removedObjects = status.removedObjects
        failures = status.failures
        droppedRemovals = status.droppedRemovals
        gaps = status.gaps
        lost = status.lost
        lastError = status.lastError
    }

    /// One line for the terminal.
    var line: String {
        "\(store): \(state), \(uploadedObjects) objects (\(uploadedBytes) bytes) stored, \(removedObjects) removed, \(failures) failed tries"
            + (gaps.isEmpty ? "" : ", \(gaps.count) gaps") + (lost.isEmpty ? "" : ", \(lost.count) lost")
    }
}
