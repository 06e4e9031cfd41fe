/// Opens the input of a container job: one file, or a CMAF init segment followed by its media
/// segments, read as one stream.
public enum MediaInput {
    /// What the jobs read.
    public typealias Source = ConcatenatedByteSource<FileByteSource>

    /// `path`, then each of `segments`, end to end.
    public static func open(_ path: String, segments: [String] = []) throws(PipelineError) -> Source {
        var parts: [FileByteSource] = []
        for part in [path] + segments {
            do { parts.append(try FileByteSource(path: part)) } catch { throw .stream(error) }
        }
        return ConcatenatedByteSource(parts)
    }
}

extension MediaInput {
    /// What a file holds, as far as play and the other whole-file jobs care.
    public enum Kind: Sendable, Hashable {
        /// A WAV or RF64 file.
        case wav
        /// An ADTS stream (an ID3 tag may come first).
        case adts
        /// An ISO BMFF/QuickTime file (MP4, M4A, MOV).
        case mp4
    }

    /// The kind of file at `path`: by extension (`.wav`, `.aac`/`.adts`, `.m4a`/`.mp4`/`.mov`/`.m4v`/`.3gp`),
    /// else by its first bytes (`RIFF`/`RF64`, an `ftyp`/`moov`/… box, an ID3 tag or ADTS sync word).
    /// `nil` when it is none of these or cannot be read.
    public static func kind(ofPath path: String) -> Kind? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if let dot = name.lastIndex(of: ".") {
            switch name[name.index(after: dot)...].lowercased() {
            case "wav", "wave": return .wav
            case "aac", "adts": return .adts
            case "m4a", "mp4", "mov", "m4v", "3gp": return .mp4
            default: break
            }
        }
        guard let source = try? FileByteSource(path: path), let head = try? source.read(at: 0, count: 12) else { return nil }
        let text = { (range: Range<Int>) in String(decoding: head[range], as: UTF8.self) }
        if head.count >= 12, ["RIFF", "RF64"].contains(text(0..<4)), text(8..<12) == "WAVE" { return .wav }
        if head.count >= 8, ["ftyp", "moov", "mdat", "free", "wide", "skip", "styp"].contains(text(4..<8)) { return .mp4 }
        if head.count >= 3, text(0..<3) == "ID3" { return .adts }
        if head.count >= 2, head[0] == 0xFF, head[1] & 0xF6 == 0xF0 { return .adts }
        return nil
    }
}
