public import MediaCore
public import MP4
public import SystemPackage

/// `keyframe validate`'s checks of what is on disk: an MP4/M4A/M4B (its gapless signals,
/// ``/MP4/GaplessValidation``, and when fragmented its fragments,
/// ``/MP4/SegmentSequenceValidation``), a CMAF init segment with its media segments, an HLS
/// playlist (``HLSValidation``), a DASH MPD (``DASHValidation``), or a directory of them.
public enum FileValidation {
    /// What a path holds, as validate reads it.
    public enum Input: Sendable, Hashable {
        /// A directory: its master playlist (or every playlist) and its MPDs.
        case directory
        /// An HLS playlist, master or media.
        case hlsPlaylist
        /// A DASH MPD.
        case dashManifest
        /// An ISO BMFF file with a movie (`moov`): a whole file or an init segment.
        case movie
        /// A media segment (`styp`, `sidx`, `moof` first): it needs its init segment before it.
        case mediaSegment
        /// None of these.
        case other
    }

    /// What `path` holds, from its first bytes (and for a directory, from the file system).
    public static func input(at path: FilePath) -> Input {
        if FileSystemCalls.isDirectory(path) { return .directory }
        guard let source = FileByteSource.regularFile(at: path), let head = try? source.read(at: 0, count: 64) else { return .other }
        let text = String(decoding: head.prefix(64), as: UTF8.self)
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        if trimmed.hasPrefix("#EXTM3U") { return .hlsPlaylist }
        if trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<MPD") { return .dashManifest }
        guard head.count >= 8 else { return .other }
        let type = String(decoding: head[4..<8], as: UTF8.self)
        switch type {
        case "styp", "sidx", "moof", "emsg", "prft": return .mediaSegment
        case "ftyp", "moov", "free", "skip", "wide", "pdin", "mdat": return .movie
        default: return .other
        }
    }

    /// What validate says of one argument (or of an init segment and the media segments after it).
    public struct Report: Sendable {
        /// The path (the init segment's, for a sequence).
        public var path: String
        /// The findings.
        public var findings: [ValidationFinding]
        /// Why the path could not be read at all (`keyframe validate` exits 2).
        public var error: PipelineError?
    }

    /// Checks each of `paths` for what it is (``input(at:)``); an init segment followed by media
    /// segments is checked as one sequence. A file of another format is checked by its entry's
    /// validator in `formats` (an MP3's LAME tag, an Ogg Opus stream's granule positions, a
    /// FLAC file's MD5).
    public static func reports(for paths: [FilePath], formats: MediaFormatRegistry = .containers) -> [Report] {
        var reports: [Report] = []
        var index = 0
        while index < paths.count {
            let path = paths[index]
            index += 1
            func report(_ body: () throws(PipelineError) -> [ValidationFinding]) -> Report {
                do {
                    // The same segments checked twice (through a playlist and an MPD) say the same
                    // once.
                    var seen = Set<ValidationFinding>()
                    let found = try body().filter { seen.insert($0).inserted }
                    return Report(path: path.string, findings: ValidationFinding.collapsingRepeats(found))
                } catch { return Report(path: path.string, findings: [], error: error) }
            }
            switch input(at: path) {
            case .movie:
                var segments: [FilePath] = []
                while index < paths.count, input(at: paths[index]) == .mediaSegment {
                    segments.append(paths[index])
                    index += 1
                }
                reports.append(report { () throws(PipelineError) in
                    segments.isEmpty ? try findings(for: path) : try sequence(initSegment: path, segments: segments).findings
                })
            case .mediaSegment:
                reports.append(Report(path: path.string, findings: [],
                                      error: .unsupported("\(path): a media segment; give its init segment before it (validate init.mp4 segment-*.m4s)")))
            case .hlsPlaylist:
                reports.append(report { () throws(PipelineError) in try HLSValidation.findings(forPlaylist: path) })
            case .dashManifest:
                reports.append(report { () throws(PipelineError) in try DASHValidation.findings(forManifest: path) })
            case .directory:
                if let files = filesWithoutManifest(in: path, formats: formats) {
                    // A folder of M4As, MP3s, FLACs (an album, a podcast's episodes): each file on its own.
                    reports += self.reports(for: files, formats: formats)
                } else {
                    reports.append(report { () throws(PipelineError) in try findings(forDirectory: path) })
                }
            case .other:
                do { _ = try FileByteSource(regularFileAt: path) } catch {
                    reports.append(Report(path: path.string, findings: [], error: .stream(error)))
                    continue
                }
                if let validator = formats.entry(for: formats.detect(path))?.validator {
                    reports.append(report { () throws(PipelineError) in try validator(path) })
                    continue
                }
                let others = formats.entries.filter { $0.validator != nil }.compactMap { $0.format.fileExtensions.first.map { "." + $0 } }
                reports.append(Report(path: path.string, findings: [],
                                      error: .unsupported("\(path): not an MP4/M4A/M4B, \(others.isEmpty ? "" : others.joined(separator: ", ") + ", ")"
                                                          + "a CMAF segment, an HLS playlist, a DASH MPD or a directory of them")))
            }
        }
        return reports
    }

    /// The files of a directory that holds no playlist and no MPD that validate checks on their
    /// own: MP4/M4A/M4B, and those of a format with a validator in `formats` (MP3, FLAC, Ogg
    /// Opus), by name (hidden files left out); `nil` when it holds a playlist or an MPD, cannot
    /// be listed, or holds no such file (``findings(forDirectory:)`` then says why).
    static func filesWithoutManifest(in directory: FilePath, formats: MediaFormatRegistry) -> [FilePath]? {
        guard let names = try? FileSystemCalls.entries(of: directory),
              !names.contains(where: { $0.hasSuffix(".m3u8") || $0.hasSuffix(".mpd") }) else { return nil }
        let files = names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appending($0) }.filter { path in
            switch input(at: path) {
            case .movie: true
            case .other: formats.entry(for: formats.detect(path))?.validator != nil
            default: false
            }
        }
        return files.isEmpty ? nil : files
    }

    /// A directory as a packager leaves it: its master playlist (or, without one, every
    /// playlist in it) and every MPD.
    ///
    /// - Throws: `PipelineError.unsupported` when it holds neither.
    public static func findings(forDirectory directory: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let names: [String]
        do { names = try FileSystemCalls.entries(of: directory) } catch {
            throw .stream(.system(operation: "list", path: directory, errno: error))
        }
        let playlists = names.filter { $0.hasSuffix(".m3u8") }
        let masters = playlists.filter { name in
            guard let source = FileByteSource.regularFile(at: directory.appending(name)),
                  let bytes = try? source.read(at: 0, count: Int(min(source.byteCount, 1 << 20))) else { return false }
            return String(decoding: bytes, as: UTF8.self).contains("#EXT-X-STREAM-INF")
        }
        let manifests = names.filter { $0.hasSuffix(".mpd") }
        guard !playlists.isEmpty || !manifests.isEmpty else {
            throw .unsupported("\(directory): no .m3u8 playlist, no .mpd and no MP4/M4A/M4B, MP3, FLAC or Ogg Opus file in it")
        }
        var found: [ValidationFinding] = []
        for name in masters.isEmpty ? playlists : masters {
            found += try HLSValidation.findings(forPlaylist: directory.appending(name))
        }
        for name in manifests {
            found += try DASHValidation.findings(forManifest: directory.appending(name))
        }
        return found
    }

    /// The findings for the MP4 at `path`: its gapless signals, and when it is fragmented (its
    /// samples in `moof`s, or an init segment alone), the fragment rules.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` when the file cannot be read, or not as MP4.
    public static func findings(for path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let source: FileByteSource
        do { source = try FileByteSource(regularFileAt: path) } catch { throw .stream(error) }
        let file: MP4File
        do { file = try MP4File(source: source) } catch { throw .container(error) }
        guard file.fragmentCount > 0 else { return file.damageFindings(name: path.string) + GaplessValidation.findings(in: file, name: path.string) }
        // Fragmented: the fragment rules over the movie already read.
        do {
            return try SegmentSequenceValidation(file: file, source: source, parts: [.init(name: path.string, byteCount: source.byteCount)]).findings
        } catch { throw .container(error) }
    }

    /// An init segment and its media segments, checked as one track.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` when a file cannot be read, or the init not as MP4.
    public static func sequence(initSegment: FilePath, segments: [FilePath]) throws(PipelineError) -> SegmentSequenceValidation {
        // Each file opened for each read, not held open: thousands of segments.
        var sources: [FileRangeSource] = []
        for path in [initSegment] + segments {
            do { sources.append(FileRangeSource(path: path, start: 0, byteCount: try FileByteSource(regularFileAt: path).byteCount)) } catch {
                throw .stream(error)
            }
        }
        let parts = zip([initSegment] + segments, sources).map { SegmentSequenceValidation.Part(name: $0.0.string, byteCount: $0.1.byteCount) }
        do { return try SegmentSequenceValidation(source: ConcatenatedByteSource(sources), parts: parts) } catch { throw .container(error) }
    }
}
