public import SystemPackage
internal import AudioBitstreams

/// A file format, as KeyFrameKit identifies it: its name, its extensions, how it is recognised
/// from its first bytes, and what it can carry. For an input, what the bytes say wins over the
/// name.
///
/// An open identifier: KeyFrameKit's formats are its static members (``builtIn`` lists them),
/// and a format of another package is one more value, which a ``MediaFormatRegistry`` entry
/// registers with its readers and writers. Two values are the same format when their
/// ``name``s are equal.
public struct MediaFileFormat: Sendable, Hashable, CustomStringConvertible {
    /// The format's identifier (`wav`, `mp4`, `hlsPlaylist`).
    public let name: String
    /// A short name for messages (`WAV`, `ADTS`, `MP4`, …).
    public let description: String
    /// The file name extensions that name the format, lowercase, the usual one first.
    public let fileExtensions: [String]
    /// What the format can hold.
    public let contents: Contents
    /// The MIME type a server gives it (RFC 6838 registrations; RFC 8216 4 for playlists; ISO/IEC
    /// 23000-19 and RFC 4337 for CMAF and MP4 audio).
    public let mimeType: String
    /// Whether the first bytes of a file (up to ``sniffLength``) show this format; `nil` for a
    /// format without a signature (raw PCM), which only its name shows.
    public let recognizes: (@Sendable (_ head: [UInt8]) -> Bool)?
    /// The audio codecs a file of the format is known to hold, the one a job writes when none is
    /// asked first (MP4: AAC, Opus, FLAC, ALAC; ADTS: AAC); empty when the format does not say,
    /// and its writer takes or refuses a codec itself.
    public let audioCodecs: [AudioCodecID]
    /// Whether a file of the format holds, besides ``audioCodecs``, any codec a codec registry
    /// describes (``/MediaCore/AudioCodecDescription``: its ISO BMFF sample entry), as MP4 does.
    public let holdsDescribedCodecs: Bool

    /// A format named `name`, described as `description` in messages, holding `audioCodecs`
    /// (empty: whatever its writer takes) and, with `holdsDescribedCodecs`, any described codec.
    public init(name: String, description: String, fileExtensions: [String], contents: Contents, mimeType: String,
                audioCodecs: [AudioCodecID] = [], holdsDescribedCodecs: Bool = false,
                recognizes: (@Sendable (_ head: [UInt8]) -> Bool)? = nil) {
        self.name = name
        self.description = description
        self.fileExtensions = fileExtensions.map { $0.lowercased() }
        self.contents = contents
        self.mimeType = mimeType
        self.audioCodecs = audioCodecs
        self.holdsDescribedCodecs = holdsDescribedCodecs
        self.recognizes = recognizes
    }

    /// The codec a job writes into the format when none is asked: the first of ``audioCodecs``,
    /// else AAC for a format of compressed audio.
    public var defaultAudioCodec: AudioCodecID? { audioCodecs.first ?? (contents.contains(.audioPackets) ? .aac : nil) }

    /// Refuses a `codec` a file of this format cannot hold, naming both: what a job that writes
    /// `path` checks before it encodes. A format that lists no codecs takes any; one that holds
    /// described codecs takes one of `described` too.
    ///
    /// - Throws: `PipelineError.unsupported` naming the format, the file, the codec and what
    ///   the format holds.
    public func check(holds codec: AudioCodecID, path: FilePath, described: [AudioCodecDescription] = []) throws(PipelineError) {
        guard !audioCodecs.isEmpty, !audioCodecs.contains(codec), !(holdsDescribedCodecs && described.matching(codec) != nil) else { return }
        let held = audioCodecs.isEmpty ? "no compressed audio" : audioCodecs.map(\.name).joined(separator: ", ")
        let hint = holdsDescribedCodecs ? " (or any codec whose ISO BMFF description is registered: register the codec's description)" : ""
        throw .unsupported("\(path): \(description) cannot hold \(codec); it holds \(held)\(hint)", path: path)
    }

    /// Formats are equal when their names are.
    public static func == (lhs: MediaFileFormat, rhs: MediaFileFormat) -> Bool { lhs.name == rhs.name }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// What a format can hold.
    public struct Contents: OptionSet, Sendable, Hashable {
        /// The raw value.
        public let rawValue: UInt8
        /// A raw value.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Uncompressed audio.
        public static let pcm = Contents(rawValue: 1 << 0)
        /// Compressed audio packets (AAC, or a registered codec's).
        public static let audioPackets = Contents(rawValue: 1 << 1)
        /// Compressed audio packets, by the name it had when AAC was the only codec.
        @available(*, deprecated, renamed: "audioPackets")
        public static let aac = audioPackets
        /// Video access units.
        public static let video = Contents(rawValue: 1 << 2)
        /// More than one track.
        public static let multipleTracks = Contents(rawValue: 1 << 3)
        /// The encoder's priming and the exact length (an edit list, iTunSMPB), so a decode is
        /// sample-exact.
        public static let gaplessInfo = Contents(rawValue: 1 << 4)
        /// Tags (title, artist, …).
        public static let tags = Contents(rawValue: 1 << 5)
    }

    /// WAV or RF64 (EBU Tech 3306): PCM in a RIFF container (`RIFF`/`RF64` … `WAVE`).
    public static let wav = MediaFileFormat(
        name: "wav", description: "WAV", fileExtensions: ["wav", "wave", "rf64"], contents: .pcm, mimeType: "audio/wav",
        recognizes: isWAV)
    /// Raw interleaved PCM: no header, so its layout comes from the caller.
    public static let rawPCM = MediaFileFormat(
        name: "rawPCM", description: "raw PCM", fileExtensions: ["pcm", "raw"], contents: .pcm, mimeType: "application/octet-stream")
    /// AAC in ADTS (ISO/IEC 14496-3, 1.A.2.2), possibly behind an ID3v2 tag: `ID3`, or the 12-bit
    /// ADTS syncword with layer 0 (unless the head is an MP4 box header).
    public static let adts = MediaFileFormat(
        name: "adts", description: "ADTS", fileExtensions: ["aac", "adts"], contents: [.audioPackets, .tags], mimeType: "audio/aac",
        audioCodecs: [.aac], recognizes: { head in
            text(head, 0..<3) == "ID3" || (head.count >= 2 && head[0] == 0xFF && head[1] & 0xF6 == 0xF0 && !isMP4(head))
        })
    /// ISO base media files (ISO/IEC 14496-12/-14) and QuickTime: MP4, M4A, M4B, MOV, 3GP, CMAF.
    /// Recognised by a box header whose type is `ftyp`, `moov`, `mdat`, `free`, `skip`, `wide`,
    /// `styp`, `sidx`, `moof` or `pdin`, with a size of 0, 1 or at least 8 (unless it is a WAV,
    /// whose RIFF size can spell a box type).
    public static let mp4 = MediaFileFormat(
        name: "mp4", description: "MP4", fileExtensions: ["m4a", "mp4", "m4b", "mov", "m4v", "3gp", "cmfa", "m4s"],
        contents: [.audioPackets, .video, .multipleTracks, .gaplessInfo, .tags], mimeType: "audio/mp4",
        audioCodecs: [.aac, .opus, .flac, .alac], holdsDescribedCodecs: true, recognizes: { head in isMP4(head) })
    /// Native FLAC (RFC 9639): `fLaC`, metadata blocks, frames. KeyFrameKit writes it
    /// (``FLACFileOutput``); libavformat (or libFLAC, for 32 bits) reads it.
    public static let flac = MediaFileFormat(
        name: "flac", description: "FLAC", fileExtensions: ["flac"], contents: [.audioPackets, .gaplessInfo, .tags],
        mimeType: "audio/flac", audioCodecs: [.flac], recognizes: { head in text(head, 0..<4) == "fLaC" })
    /// MPEG-1/2/2.5 audio of layer I–III (ISO/IEC 11172-3, 13818-3), as an MP3 file is: an
    /// ID3v2 tag, then frames, the first of them an Info frame with the LAME tag's gapless numbers.
    /// KeyFrameKit writes it (``MP3FileOutput``); libavformat reads it. Recognised by a frame
    /// header (a sync word of 11 bits and a layer other than 0, which ADTS has), or by an ID3v2
    /// tag followed by one (``detect(_:)``).
    public static let mp3 = MediaFileFormat(
        name: "mp3", description: "MP3", fileExtensions: ["mp3", "mp2", "mpga"], contents: [.audioPackets, .gaplessInfo, .tags],
        mimeType: "audio/mpeg", audioCodecs: [.mp3], recognizes: { head in MPEGAudioFrameHeader(head, at: 0) != nil && !isMP4(head) })
    /// Opus in Ogg (RFC 7845): pages (`OggS`) whose first packet is `OpusHead`. KeyFrameKit
    /// writes it (``OggOpusFileOutput``); libavformat reads it, and any other Ogg stream (Vorbis,
    /// FLAC in Ogg), which this format's signature leaves to libavformat's reader.
    public static let oggOpus = MediaFileFormat(
        name: "oggOpus", description: "Ogg Opus", fileExtensions: ["opus", "ogg", "oga"], contents: [.audioPackets, .gaplessInfo, .tags],
        mimeType: "audio/ogg", audioCodecs: [.opus], recognizes: { head in
            // The capture pattern, then (after a 27-byte header and a one-segment table) OpusHead.
            text(head, 0..<4) == "OggS" && head.count >= 36 && text(head, 28..<36) == "OpusHead"
        })
    /// An H.264 elementary stream in Annex-B byte-stream format (ITU-T H.264, Annex B): a start
    /// code followed by the NAL unit header of a parameter set, an access unit delimiter or SEI
    /// (unless the head is an MP4 box header: a box of 256–511 bytes starts `00 00 01`).
    public static let h264 = MediaFileFormat(
        name: "h264", description: "H.264 Annex-B", fileExtensions: ["h264", "264", "avc"], contents: .video, mimeType: "video/h264",
        recognizes: { annexBCodec($0) == .h264 })
    /// An HEVC elementary stream in Annex-B byte-stream format (ITU-T H.265, Annex B).
    public static let hevc = MediaFileFormat(
        name: "hevc", description: "HEVC Annex-B", fileExtensions: ["h265", "265", "hevc"], contents: .video, mimeType: "video/h265",
        recognizes: { annexBCodec($0) == .hevc })
    /// An HLS media playlist (RFC 8216) of CMAF segments beside it: read as its init segment
    /// followed by its media segments, in order. Recognised by `#EXTM3U` (after a byte-order mark).
    public static let hlsPlaylist = MediaFileFormat(
        name: "hlsPlaylist", description: "HLS playlist", fileExtensions: ["m3u8"], contents: [.audioPackets, .gaplessInfo],
        mimeType: "application/vnd.apple.mpegurl", audioCodecs: [.aac],
        recognizes: { head in
            text(head, 0..<min(head.count, 10))?.drop(while: { $0 == "\u{FEFF}" }).hasPrefix("#EXTM3U") ?? false
        })

    /// KeyFrameKit's own formats. Their signatures are disjoint (each ``recognizes`` refuses what
    /// an earlier-tried format would have claimed: a WAV whose RIFF size spells a box type, an
    /// MP4 box header that looks like an Annex-B start code or an ADTS syncword), so the order in
    /// which they are tried decides nothing; it is the order messages list extensions in.
    public static let builtIn: [MediaFileFormat] = [.wav, .rawPCM, .adts, .mp4, .flac, .mp3, .oggOpus, .h264, .hevc, .hlsPlaylist]

    /// `RIFF`/`RF64` … `WAVE`.
    private static func isWAV(_ head: [UInt8]) -> Bool {
        let riff = text(head, 0..<4)
        return (riff == "RIFF" || riff == "RF64") && text(head, 8..<12) == "WAVE"
    }

    /// A box header of a type that starts MP4 files, and no WAV.
    private static func isMP4(_ head: [UInt8]) -> Bool {
        guard let type = text(head, 4..<8), mp4BoxTypes.contains(type), !isWAV(head) else { return false }
        let size = head[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return size == 0 || size == 1 || size >= 8
    }

    /// `head[range]` as text, or `nil` when `head` is shorter.
    private static func text(_ head: [UInt8], _ range: Range<Int>) -> String? {
        head.count >= range.upperBound ? String(decoding: head[range], as: UTF8.self) : nil
    }

    /// The MIME type of a file named with `fileExtension` (case-insensitive), for a server: the
    /// format's (``mimeType``), but for the names that say more — `m4s`, a CMAF or DASH media
    /// segment (`video/iso.segment`, ISO/IEC 23000-19 Annex I), `mp4` (`video/mp4`, RFC 4337),
    /// `mpd`, a DASH manifest (`application/dash+xml`, ISO/IEC 23009-1 Annex C), and `vtt`, a
    /// WebVTT file of chapters (`text/vtt`, W3C WebVTT). `nil` for a name the table does not know.
    public static func mimeType(ofFileExtension fileExtension: String) -> String? {
        switch fileExtension.lowercased() {
        case "m4s": "video/iso.segment"
        case "mp4": "video/mp4"
        case "mpd": "application/dash+xml"
        case "vtt": "text/vtt"
        case let other: MediaFileFormat(fileExtension: other)?.mimeType
        }
    }

    /// Whether the format holds audio (PCM or AAC).
    public var carriesAudio: Bool { !contents.isDisjoint(with: [.pcm, .audioPackets]) }

    /// The built-in format an extension names, if any (case-insensitive, without the dot); a
    /// registry's ``MediaFormatRegistry/format(fileExtension:)`` knows its registered ones too.
    public init?(fileExtension: String) {
        guard let format = Self.named(byExtension: fileExtension, among: Self.builtIn) else { return nil }
        self = format
    }

    /// The built-in format `path`'s extension names, if any: what an output will be.
    public init?(nameOf path: FilePath) {
        guard let ext = path.extension else { return nil }
        self.init(fileExtension: ext)
    }

    /// The first of `formats` that `fileExtension` names (case-insensitive).
    static func named(byExtension fileExtension: String, among formats: [MediaFileFormat]) -> MediaFileFormat? {
        let lowered = fileExtension.lowercased()
        return formats.first { $0.fileExtensions.contains(lowered) }
    }

    /// The built-in format the first bytes of a file show, if they show one (the first of
    /// ``builtIn`` whose ``recognizes`` says so). Raw PCM has no signature and is never
    /// recognised here.
    public static func sniff(_ head: [UInt8]) -> MediaFileFormat? { sniff(head, among: builtIn) }

    /// The first of `formats` that recognises `head`.
    public static func sniff(_ head: [UInt8], among formats: [MediaFileFormat]) -> MediaFileFormat? {
        formats.first { $0.recognizes?(head) ?? false }
    }

    private static let mp4BoxTypes: Set<String> = ["ftyp", "moov", "mdat", "free", "skip", "wide", "styp", "sidx", "moof", "pdin"]

    /// H.264 or HEVC from the first NAL unit after a start code.
    private static func annexBCodec(_ head: [UInt8]) -> VideoCodec? {
        let start: Int
        if head.count >= 5, head[0] == 0, head[1] == 0, head[2] == 0, head[3] == 1 { start = 4 }
        else if head.count >= 4, head[0] == 0, head[1] == 0, head[2] == 1 { start = 3 }
        else { return nil }
        let header = head[start]
        guard header & 0x80 == 0, !isMP4(head) else { return nil }
        // HEVC (H.265, 7.3.1.2): type in bits 1–6, then a layer id and a nonzero temporal id.
        if head.count > start + 1 {
            let hevcType = (header >> 1) & 0x3F
            let temporalIDPlus1 = head[start + 1] & 0x07
            if [32, 33, 34, 35, 39].contains(hevcType), header & 0x01 == 0, temporalIDPlus1 != 0 { return .hevc }
        }
        // H.264 (7.3.1): type in the low 5 bits: SPS 7, PPS 8, AUD 9, SEI 6.
        if [6, 7, 8, 9].contains(header & 0x1F) { return .h264 }
        return nil
    }

    /// Bytes ``sniff(_:)`` looks at.
    public static let sniffLength = 64

    /// The format of the file at `path`: what its first bytes show, else what its extension
    /// names. `nil` when it is neither (or the file cannot be read and its name says nothing).
    /// An ID3v2 tag starts ADTS and MP3 files alike: what follows it decides.
    public static func detect(_ path: FilePath) -> MediaFileFormat? { detect(path, among: builtIn) }

    /// ``detect(_:)`` among `formats`.
    static func detect(_ path: FilePath, among formats: [MediaFileFormat]) -> MediaFileFormat? {
        if let source = FileByteSource.regularFile(at: path), let head = try? source.read(at: 0, count: sniffLength),
           let format = sniff(head, among: formats) {
            // An ID3v2 tag (ID3v2.4 § 3.1) starts MP3 files as often as ADTS ones: what follows
            // the tag decides. MPEG audio of another layer (an MP3) is not ADTS.
            if format == .adts, head.count >= 10, head[0] == 0x49, head[1] == 0x44, head[2] == 0x33 {
                return afterID3(source: source, head: head).format.flatMap { formats.contains($0) ? $0 : nil }
            }
            return format
        }
        // An Ogg stream of another codec (Vorbis, FLAC in Ogg) is not Ogg Opus for its name.
        if let source = FileByteSource.regularFile(at: path), let head = try? source.read(at: 0, count: 4), head == Array("OggS".utf8) {
            return nil
        }
        return path.extension.flatMap { named(byExtension: $0, among: formats) }
    }

    /// Bytes after an ID3v2 tag searched for the first frame's sync word.
    static let afterTagSearchLength = 65536

    /// What follows an ID3v2 tag decides between ADTS and MPEG audio (an MP3). After any zero
    /// bytes some taggers leave outside the tag's declared size (FFmpeg's MP3 reader resyncs
    /// over them), the first bytes are an ADTS header (a 12-bit sync word and layer 0, ISO/IEC
    /// 14496-3 1.A.2.2.1): ADTS; or an MPEG-1/2/2.5 audio frame header of layer I–III (ISO/IEC
    /// 11172-3 2.4.2.3) followed, one frame length later, by another: ``mp3``. Anything else (a FLAC or WavPack stream behind a tag, unknown bytes) stays ADTS,
    /// whose reader says what it finds, and which a decode hands to libavformat when it refuses.
    static func afterID3(_ bytes: [UInt8]) -> (format: MediaFileFormat?, syncIndex: Int?) {
        guard let index = bytes.firstIndex(where: { $0 != 0 }), index + 1 < bytes.count, bytes[index] == 0xFF else { return (.adts, nil) }
        if bytes[index + 1] & 0xF6 == 0xF0 { return (.adts, index) }
        if let length = MPEGAudioFrameHeader(bytes, at: index)?.frameLength {
            let next = index + length
            // A second header where the first frame ends (or the read window ends first).
            if next + 1 >= bytes.count || (bytes[next] == 0xFF && bytes[next + 1] & 0xFE == bytes[index + 1] & 0xFE) {
                return (.mp3, index)
            }
        }
        return (.adts, nil)
    }

    /// ``afterID3(_:)`` of the bytes after the ID3v2 tag that `head` starts with, and the end of
    /// that tag (ID3v2.4 3.1: a 10-byte header, a syncsafe size, a 10-byte footer when flagged).
    private static func afterID3(source: FileByteSource, head: [UInt8]) -> (format: MediaFileFormat?, tagEnd: Int64, sync: Int64?) {
        let tagEnd = id3v2TagEnd(head) ?? 0
        let after = (try? source.read(at: tagEnd, count: afterTagSearchLength)) ?? []
        let found = afterID3(after)
        return (found.format, tagEnd, found.syncIndex.map { tagEnd + Int64($0) })
    }

    /// Where the ID3v2 tag that `head` starts with ends (ID3v2.4 3.1: a 10-byte header, a
    /// syncsafe size, a 10-byte footer when flagged); `nil` when `head` starts with no tag.
    package static func id3v2TagEnd(_ head: [UInt8]) -> Int64? {
        ID3v2Tag.length(ofTagStarting: head).map(Int64.init)
    }

    /// For MPEG audio (an MP3) behind an ID3v2 tag with stray bytes between the tag and the
    /// first frame: the offset of that frame. `nil` for any other file, and for an MP3 whose
    /// first frame follows its tag at once.
    public static func mpegAudioStartAfterStrayBytes(_ path: FilePath) -> Int64? {
        guard let source = FileByteSource.regularFile(at: path), let head = try? source.read(at: 0, count: sniffLength),
              head.count >= 10, head[0] == 0x49, head[1] == 0x44, head[2] == 0x33 else { return nil }
        let found = afterID3(source: source, head: head)
        guard found.format == .mp3, let sync = found.sync, sync > found.tagEnd else { return nil }
        return sync
    }

    /// Extensions of the files that can hold `contents`, for messages (`.wav, .pcm, …`); a
    /// playlist, which holds its segments' contents but is no such file itself, is not listed.
    public static func extensionList(holding contents: Contents) -> String { extensionList(holding: contents, among: builtIn) }

    /// The usual extensions of the built-in formats that hold `codec` (`.aac, .m4a` for AAC),
    /// for a message about a job that reads or writes that codec.
    public static func extensionList(holdingCodec codec: AudioCodecID) -> String { extensionList(holdingCodec: codec, among: builtIn) }

    /// ``extensionList(holdingCodec:)`` of `formats`.
    static func extensionList(holdingCodec codec: AudioCodecID, among formats: [MediaFileFormat]) -> String {
        formats.filter { $0 != .hlsPlaylist && $0.audioCodecs.contains(codec) }
            .compactMap { $0.fileExtensions.first.map { ".\($0)" } }.joined(separator: ", ")
    }

    /// ``extensionList(holding:)`` of `formats`.
    static func extensionList(holding contents: Contents, among formats: [MediaFileFormat]) -> String {
        formats.filter { $0 != .hlsPlaylist && !$0.contents.isDisjoint(with: contents) }
            .compactMap { $0.fileExtensions.first.map { ".\($0)" } }.joined(separator: ", ")
    }
}
