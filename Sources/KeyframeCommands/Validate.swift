import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit

/// `keyframe validate PATH… [--json]`: the gapless signals and packaging rules of an M4A/MP4, an
/// MP3, FLAC or Ogg Opus file, a CMAF segment sequence, an HLS playlist, a DASH MPD, or a
/// directory of them.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check the gapless signals and packaging rules of an M4A/MP4, MP3, FLAC, Ogg Opus, CMAF segments, an HLS playlist or a DASH MPD.",
        discussion: """
            A PATH is an M4A/MP4/M4B, an init segment followed by its media segments (validate \
            init.mp4 seg-*.m4s), an HLS playlist (master or media, low-latency parts included), \
            a DASH MPD, an MP3, FLAC or Ogg Opus file, or a directory (its master playlist, or \
            every playlist, and every MPD; without either, every MP4/M4A/M4B file in it). MP3: the \
            LAME tag's frame count, byte count, music CRC and tag CRC against the frames, its \
            delay and padding against the length. FLAC: every frame decoded by libFLAC and the \
            MD5 of the samples against STREAMINFO's. Ogg Opus: page CRCs and numbering, and each \
            granule position against the packets' durations (the last one's end trimming). \
            Checked: the edit list against iTunSMPB, unsignalled priming (a warning), a short \
            last sample against the valid length; ISO BMFF and CMAF rules (ftyp, mvex, one traf \
            per moof, mfhd order, tfdt continuity, tfhd/trun addressing, whole AAC frames, \
            styp, sidx); each EXTINF, part DURATION and DASH S@d against its segment's trun \
            durations, the MPD's presentationTimeOffset against the init's edit; RFC 8216 \
            (target duration, version, ENDLIST, BANDWIDTH against the peak segment bit rate, \
            CODECS against the sample entry, renditions alike) and low-latency HLS (part \
            targets, PART-HOLD-BACK, preload hints, blocking reload). Each finding names the \
            file, the box path, line or element, the rule, what was expected and what was \
            found, as an error or a warning. --rules apple also checks an HLS stream (a playlist, \
            or a directory's master.m3u8 or index.m3u8) against the audio rules of Apple's HLS \
            Authoring Specification for Apple Devices, each named by its number: CODECS (9.1) \
            and AVERAGE-BANDWIDTH (9.14) on every variant, declared bit rates within 10 % of \
            those measured (1.26, 1.27), EXT-X-INDEPENDENT-SEGMENTS (9.11, SHOULD), a variant at \
            or below 192 kb/s (9.21), HE-AAC at most 64 kb/s (2.4), one target duration (8.2) of \
            6 s (7.5, SHOULD), EXTINF at most 0.5 s past it (7.7), PLAYLIST-TYPE VOD (8.6), live \
            windows of six segments (8.11) with program date-times (8.4), EXT-X-MAP (8.20) and a \
            ludt loudness box (2.19, SHOULD); a MUST broken is an error, a SHOULD a warning. \
            A PATH may also name an object in a store (s3://bucket/key, https://host/path, \
            env:NAME): a single file, an HLS playlist with every object it names, a DASH MPD \
            with every segment its templates name, or the place a \
            package was put (its master.m3u8 or index.m3u8), read with \
            ranged GETs into a private staging directory first; findings name the objects as \
            the store does. Exit status 0 without errors, 1 with errors, 2 when a path cannot be \
            read at all (with --json, a finding of the rule 'unreadable' says which and why).
            """
    )

    @Argument(help: "The files, segment sequences (init first), playlists, MPDs or directories to check.")
    var paths: [String]

    @OptionGroup(title: "Object stores (a PATH's URL)") var objectStore: ObjectStoreOptions

    @Flag(help: "Print one JSON object per finding (severity, file, location, rule, expected, found), a line each.")
    var json = false

    /// Rules beyond the specifications'.
    enum Rules: String, ExpressibleByArgument, CaseIterable {
        /// Apple's HLS Authoring Specification for Apple Devices (``/MediaValidation/AppleHLSRules``).
        case apple
    }

    @Option(help: ArgumentHelp("Also check an HLS stream against Apple's HLS Authoring Specification (its audio rules, by number).",
                               valueName: "apple"))
    var rules: Rules?

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("give at least one path to check") }
    }

    func run() throws {
        // Objects in stores are read into a staging directory first, and named as the store
        // names them.
        var local: [FilePath] = []
        var shownAs: [(staged: String, remote: String)] = []
        var staging: FilePath?
        defer { if let staging { RemoteObjects.discard(staging) } }
        var unreadable = 0
        // An input that cannot be read: said on stderr, and with --json as a finding of its
        // own (rule `unreadable`), so that a script reading the lines hears of every input.
        func cannotRead(_ file: String, _ reason: String) {
            unreadable += 1
            Terminal.error("error: \(reason)\n")
            if json {
                print(JSONOutput.line(ValidationFinding(.error, file: file, location: "", rule: "unreadable",
                                                        expected: "a file validate reads", found: reason)))
            }
        }
        for (index, path) in paths.enumerated() {
            guard RemoteObjects.isRemote(path, objectStore: objectStore) else {
                local.append(FilePath(path))
                continue
            }
            let directory = try staging ?? RemoteObjects.stagingDirectory()
            staging = directory
            do {
                let path = try Self.playlistInStore(path, objectStore: objectStore) ?? path
                let mirrored = try RemoteObjects.mirror(path, into: directory.appending("\(index)"), objectStore: objectStore)
                local.append(mirrored.path)
                shownAs.append((directory.appending("\(index)").string + "/", mirrored.shownAs))
            } catch let failure as CommandFailure where failure.status != .usage {
                cannotRead(RemoteObjects.shown(path), "\(failure)")
            }
        }
        func named(_ text: String) -> String {
            shownAs.reduce(text) { $0.replacing($1.staged, with: $1.remote) }
        }
        func named(_ finding: ValidationFinding) -> ValidationFinding {
            var finding = finding
            finding.file = named(finding.file)
            finding.expected = named(finding.expected)
            finding.found = named(finding.found)
            return finding
        }
        var errors = 0
        for var report in FileValidation.reports(for: local, formats: Keyframe.formats) {
            let stagedPath = report.path
            report.path = named(report.path)
            report.findings = report.findings.map(named)
            if let error = report.error {
                cannotRead(report.path, named("\(error)"))
                continue
            }
            if rules == .apple, let playlist = Self.playlist(of: stagedPath) {
                do { report.findings += try AppleHLSRules.findings(for: playlist).map(named) } catch {
                    cannotRead(report.path, named("\(error)"))
                }
            }
            for finding in report.findings {
                print(json ? JSONOutput.line(finding) : finding.description)
            }
            errors += report.findings.filter { $0.severity == .error }.count
            if !json && report.findings.isEmpty { print("\(report.path): ok") }
        }
        if unreadable > 0 { throw ExitCode(2) }
        if errors > 0 { throw ExitCode(1) }
    }

    /// The playlist of a package a store's URL names by its place (`s3://bucket/show`, as it
    /// was given to `package --hls`): its `master.m3u8`, else its `index.m3u8`; `nil` when the
    /// URL names a file (its last component has an extension) or the place holds neither.
    static func playlistInStore(_ text: String, objectStore: ObjectStoreOptions) throws -> String? {
        var place = (try? ObjectStoreOptions.url(named: text)) ?? text
        while place.hasSuffix("/") { place.removeLast() }
        guard let last = place.split(separator: "/").last, !last.contains(".") else { return nil }
        for name in ["master.m3u8", "index.m3u8"] {
            let candidate = place + "/" + name
            guard let (store, object) = try? RemoteObjects.object(candidate, objectStore: objectStore) else { return nil }
            if (try? store.contains(object)) == true { return candidate }
        }
        return nil
    }

    /// The HLS playlist a path names: itself (`.m3u8`), or a directory's master or index
    /// playlist; `nil` for anything else.
    static func playlist(of path: String) -> FilePath? {
        if path.hasSuffix(".m3u8") { return FilePath(path) }
        for name in ["master.m3u8", "index.m3u8"] where FileManager.default.fileExists(atPath: path + "/" + name) {
            return FilePath(path).appending(name)
        }
        return nil
    }
}
