import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit
import MediaCore

/// `keyframe probe INPUT [--json]`: describes a media file.
struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe a media file: format, tracks, exact duration, damage.",
        discussion: """
            ADTS (.aac, .adts) is read frame by frame: the duration is computed from the frames, \
            not estimated from the bitrate; bytes skipped while resynchronising, ID3v2 tags and a \
            truncated last frame are reported. MP4, M4A, MOV and fragmented MP4 are read from their \
            box structure: every track with codec, sample count, duration, priming and remainder \
            (from the edit list or iTunSMPB), video size after the track matrix, and tags. A broken \
            file is an error naming the box path and byte offset. Any other audio file (MP3, FLAC, \
            Ogg, WAV, an ADPCM WAV, …) is described as libavformat reads it: container, codec, rate, \
            channels, packets counted and duration. An object in a store (s3://bucket/key, \
            https://host/path/file, env:NAME) is read in ranges, never whole: an MP4 from its boxes, \
            without its media; any other file from its container's headers (and its end, where an Ogg \
            stream's last granule or a trailing tag is), so its packets are not counted, damage is not \
            looked for, and the duration is the one the container declares (FLAC's STREAMINFO, a WAV's \
            data size, an MP3's Xing/Info header, an Ogg's last granule) or, for one that declares none \
            (ADTS, an MP3 without a Xing header), libavformat's estimate from the bitrate; the report \
            says so ("headersOnly", "durationEstimated").
            """
    )

    @Argument(help: "The file to describe, or an object's URL (s3://bucket/key, https://host/path/file, env:NAME), read in ranges: an MP4's boxes without its media, any other file's headers without its packets.")
    var input: String

    @OptionGroup(title: "Object stores (an input's URL)") var objectStore: ObjectStoreOptions

    @Flag(help: "Print one JSON object (format, duration, tracks, damage) instead of text.")
    var json = false

    @Option(name: .customLong("segment"), help: "A CMAF/DASH media segment to read after INPUT (its init segment); repeatable.")
    var segments: [String] = []

    @Flag(help: "MP4: print the box tree (type, offset, size, key fields), like mp4dump. An object in a store is read in ranges, never its mdat.")
    var boxes = false

    @Flag(help: "Measure EBU R 128 loudness: integrated (LUFS), range (LU), true peak (dBTP). Reads any audio file; decodes it all (an object in a store is downloaded whole into a staging directory first).")
    var loudness = false

    func run() throws {
        if boxes {
            try printBoxTree()
            return
        }
        if loudness {
            try printLoudness()
            return
        }
        let report = RemoteObjects.isRemote(input, objectStore: objectStore) ? try remoteReport() : try Self.report(for: input, segments: segments)
        if json {
            try JSONOutput.print(report)
        } else {
            print(Self.text(of: report, path: RemoteObjects.shown(input)), terminator: "")
        }
    }

    /// The report of an object in a store, read in ranges: an MP4 from its boxes, not its
    /// media; anything else from its container's headers by libavformat
    /// (``ProbeReport/init(libavformatHeadersOf:named:)``), its packets not read.
    private func remoteReport() throws -> ProbeReport {
        guard segments.isEmpty else { throw CommandFailure("--segment goes with a local file", status: .usage) }
        let source = try RemoteObjects.source(input, objectStore: objectStore)
        let shown = RemoteObjects.shown(input)
        if try Self.isMP4(source) {
            do { return try MP4Probe.probe(source) } catch { throw CommandFailure("\(shown): \(error)", status: .unreadableInput) }
        }
        // Its messages name the object.
        do { return try ProbeReport(libavformatHeadersOf: source, named: shown) } catch {
            throw CommandFailure("\(error)", status: .unreadableInput)
        }
    }

    /// Whether the object `source` starts with an MP4 box (`ftyp`, `styp`, `moov`, …).
    private static func isMP4(_ source: ObjectRangeSource) throws -> Bool {
        let head: [UInt8]
        do { head = try source.read(at: 0, count: 12) } catch { throw CommandFailure("\(error)", status: .unreadableInput) }
        return head.count >= 8 && ["ftyp", "styp", "moov", "free", "skip", "wide"].contains(String(decoding: head[4..<8], as: UTF8.self))
    }

    /// `--loudness`: the usual report with the measurement for AAC files; for other audio, the
    /// measurement alone (`{"loudness": …}` with `--json`). An object in a store is copied into
    /// a staging directory first: the measurement decodes all of it.
    private func printLoudness() throws {
        guard RemoteObjects.isRemote(input, objectStore: objectStore) else { return try printLoudness(of: input, shown: input) }
        guard segments.isEmpty else { throw CommandFailure("--segment goes with a local file", status: .usage) }
        try RemoteObjects.withLocalInput(input, objectStore: objectStore) { path in
            try printLoudness(of: path, shown: RemoteObjects.shown(input))
        }
    }

    /// ``printLoudness()`` of the file at `path`, called `shown` in what is printed.
    private func printLoudness(of path: String, shown: String) throws {
        let measured: Loudness?
        do { measured = try Transcode.measureLoudness(FilePath(path)) } catch { throw CommandFailure(error, naming: shown) }
        guard let measured else { throw CommandFailure("\(shown): no audio to measure") }
        let format = try Self.readableFormat(path)
        if format == .mp4 || format == .adts, var report = try? Self.report(for: path, segments: segments) {
            report.loudness = measured
            if json { try JSONOutput.print(report) } else { print(Self.text(of: report, path: shown), terminator: "") }
            return
        }
        if json {
            try JSONOutput.print(LoudnessReport(loudness: measured))
        } else {
            print("\(shown): \(Self.loudnessText(measured))")
        }
    }

    /// `-23.0 LUFS integrated, 5.2 LU range, -1.3 dBTP true peak`.
    static func loudnessText(_ loudness: Loudness) -> String {
        "\(Terminal.fixed(loudness.integrated, digits: 1)) LUFS integrated, \(Terminal.fixed(loudness.range, digits: 1)) LU range, "
            + "\(Terminal.fixed(loudness.truePeak, digits: 1)) dBTP true peak"
    }

    /// The formats whose frames KeyFrameKit's own readers check for damage beside libavformat's
    /// summary.
    static let nativeFormats: Set<MediaFileFormat> = [.mp3, .oggOpus, .flac]

    static func report(for path: String, segments: [String] = []) throws -> ProbeReport {
        let format: MediaFileFormat?
        do { format = try readableFormat(path) }
        if format == .hlsPlaylist, segments.isEmpty {
            // A media playlist of CMAF segments: its init segment and segments, as one file.
            do {
                let files = try HLSMediaPlaylist.files(of: FilePath(path))
                return try MP4Probe.probe(try MediaInput.open(files.initSegment, segments: files.segments))
            } catch {
                throw CommandFailure("\(path): \(error)", status: .unreadableInput)
            }
        }
        if format == .mp4 || !segments.isEmpty {
            do { return try MP4Probe.probe(try MediaInput.open(FilePath(path), segments: segments.map { FilePath($0) })) } catch {
                throw CommandFailure("\(path): \(error)", status: .unreadableInput)
            }
        }
        guard format == .adts else {
            var reason = ""
            // No reader of KeyFrameKit's own (a format it writes only, such as FLAC): libavformat's.
            let writtenOnly = format.map { !$0.audioCodecs.isEmpty && Keyframe.formats.entry(for: $0)?.packetSource == nil } ?? false
            if format == nil || format == .wav || writtenOnly || format.map(Self.nativeFormats.contains) == true {
                do {
                    switch format {
                    case .wav?: return try ProbeReport(wavFile: FilePath(path))
                    case let native? where Self.nativeFormats.contains(native): return try ProbeReport(nativeFile: FilePath(path), formats: Keyframe.formats)
                    default: return try ProbeReport(libavformatSummaryOf: FilePath(path))
                    }
                } catch {
                    reason = " (libavformat: \(error))"
                }
            }
            throw CommandFailure("\(path): \(format.map { "an \($0) file; " } ?? "")probe reads \(Keyframe.formats.extensionList(holding: .audioPackets)) "
                                 + "and any audio file FFmpeg reads\(reason)", status: .unreadableInput)
        }
        let source: FileByteSource
        do { source = try FileByteSource(path: FilePath(path)) } catch { throw CommandFailure(error.description, status: .unreadableInput) }
        do {
            return try ADTSProbe.probe(source)
        } catch {
            throw CommandFailure("\(path): \(error)", status: .unreadableInput)
        }
    }

    /// The format of the file at `path` (content first, then name), or an error naming the
    /// file when it cannot be opened. A FIFO or a device is not opened here (a FIFO's open
    /// waits for its writer): the job opens it once, to read it.
    static func readableFormat(_ path: String) throws -> MediaFileFormat? {
        let file = FilePath(path)
        if !FileSystemCalls.exists(file) || FileSystemCalls.isRegularFile(at: file) || FileSystemCalls.isDirectory(file) {
            do { _ = try FileByteSource(path: file) } catch { throw CommandFailure(error.description, status: .unreadableInput) }
        }
        return Keyframe.formats.detect(FilePath(path))
    }

    private func printBoxTree() throws {
        if RemoteObjects.isRemote(input, objectStore: objectStore) {
            // An object's boxes, read in ranges as the report reads them.
            guard segments.isEmpty else { throw CommandFailure("--segment goes with a local file", status: .usage) }
            let source = try RemoteObjects.source(input, objectStore: objectStore)
            guard try Self.isMP4(source) else {
                throw CommandFailure("\(RemoteObjects.shown(input)): --boxes shows an MP4's boxes; this object is not an MP4", status: .usage)
            }
            return try printBoxTree(of: source, shown: RemoteObjects.shown(input))
        }
        let source: MediaInput.Source
        do { source = try MediaInput.open(FilePath(input), segments: segments.map { FilePath($0) }) } catch {
            throw CommandFailure(error, naming: input)
        }
        try printBoxTree(of: source, shown: input)
    }

    /// Prints the box tree of `source`, called `shown` in messages.
    private func printBoxTree(of source: some RandomAccessByteSource, shown input: String) throws {
        let (nodes, error): ([BoxTreeNode], MP4Error?)
        do { (nodes, error) = try BoxTree.nodes(of: source) } catch { throw CommandFailure("\(input): \(error)") }
        for node in nodes {
            let indent = String(repeating: "  ", count: node.depth)
            let fields = node.fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
            print("\(indent)[\(node.header.type)] offset=\(node.header.offset) size=\(node.header.size)" + (fields.isEmpty ? "" : " " + fields))
        }
        if let error { throw CommandFailure("\(input): \(error)") }
    }

    static func text(of report: ProbeReport, path: String) -> String {
        // A file cut short: what it declares, and what can be read.
        let length = formatSeconds(report.duration) + (report.readableDuration.map { " declared, \(formatSeconds($0)) readable" } ?? "")
        var lines = ["\(path): \(report.format.uppercased())\(report.brand.map { " (\($0))" } ?? "")\(report.fragmented == true ? ", fragmented" : ""), \(length)"]
        for track in report.tracks {
            var parts = ["track \(track.id)", track.type, track.codec]
            if let profile = track.profile { parts.append(profile) }
            if let rate = track.sampleRate { parts.append("\(rate) Hz") }
            if let channels = track.channels { parts.append("\(channels) ch") }
            if let width = track.width, let height = track.height { parts.append("\(width)x\(height)") }
            if let transform = track.transform, transform != "identity" { parts.append(transform) }
            if report.headersOnly != true { parts.append("\(track.sampleCount) packets") }
            parts.append(formatSeconds(track.duration) + (track.readableDuration.map { " (\(formatSeconds($0)) readable)" } ?? ""))
            if let bitrate = track.bitrate { parts.append(Terminal.fixed(Double(bitrate) / 1000, digits: 1) + " kb/s") }
            if let priming = track.priming { parts.append("priming \(priming)") }
            if let remainder = track.remainder { parts.append("remainder \(remainder)") }
            lines.append("  " + parts.joined(separator: "  "))
            if let damage = track.damage { lines.append("    unreadable: \(damage)") }
        }
        for (key, value) in (report.tags ?? [:]).sorted(by: { $0.key < $1.key }) { lines.append("  tag \(key): \(value)") }
        if let loudness = report.loudness { lines.append("  loudness: \(loudnessText(loudness))") }
        if report.tagBytes > 0 { lines.append("  tags: \(report.tagBytes) bytes skipped") }
        if report.bytesSkipped > 0 { lines.append("  skipped: \(report.bytesSkipped) bytes that are not \(report.format.uppercased())") }
        if report.headersOnly == true {
            // Nothing past the headers was read: no packets to count, no damage looked for.
            let length = report.durationEstimated == true ? "duration estimated from the bitrate" : "duration as the container declares it"
            lines.append("  read: the headers only (\(length); packets not counted, damage not looked for)")
        } else if report.damageCount == 0 {
            lines.append("  damage: none")
        } else {
            lines.append("  damage: \(report.damageCount) event(s)")
            lines += report.damage.map { "    - \($0)" }
            if report.damageCount > report.damage.count {
                lines.append("    … and \(report.damageCount - report.damage.count) more")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func formatSeconds(_ seconds: Double) -> String {
        Terminal.fixed(seconds, digits: 6) + " s"
    }
}

/// `probe --loudness --json` of a file that is not AAC: the measurement alone.
struct LoudnessReport: Encodable {
    var loudness: Loudness
}
